package gateway_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// chatOnlyKeys are JSON keys of chat completions that neither the
// Messages API nor the Responses API has: a struct type that carries one
// is a copy of a chat wire type, which belongs in domain/chat.
var chatOnlyKeys = []string{
	"choices", "finish_reason", "tool_calls", "tool_call_id", "prompt_tokens", "completion_tokens",
	"prompt_tokens_details", "completion_tokens_details", "max_completion_tokens", "stream_options",
	"include_usage", "image_url", "function",
}

// chatCopies lists the struct types in src (a Go file's text) that carry
// a chat-only JSON key, named or anonymous, at any depth, as
// "file:line keys".
func chatCopies(t *testing.T, fset *token.FileSet, name string, src []byte) []string {
	t.Helper()
	f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatalf("parsing %s: %v", name, err)
	}
	var found []string
	ast.Inspect(f, func(n ast.Node) bool {
		st, ok := n.(*ast.StructType)
		if !ok {
			return true
		}
		var keys []string
		for _, fld := range st.Fields.List {
			if fld.Tag == nil {
				continue
			}
			tag, err := strconv.Unquote(fld.Tag.Value)
			if err != nil {
				continue
			}
			key, _, _ := strings.Cut(reflect.StructTag(tag).Get("json"), ",")
			if slices.Contains(chatOnlyKeys, key) {
				keys = append(keys, key)
			}
		}
		if len(keys) > 0 {
			found = append(found, fset.Position(st.Pos()).String()+" "+strings.Join(keys, ","))
		}
		return true
	})
	return found
}

// TestDialectsDefineNoChatTypes: the chat wire types are defined once, in
// domain/chat. Every package below readapi/gateway (the dialects, and any
// added later) and commands/complete use them; a struct type there with
// a chat-only JSON key (a re-introduced copy of a chat message, tool,
// part, reply, chunk or usage) fails.
func TestDialectsDefineNoChatTypes(t *testing.T) {
	fset := token.NewFileSet()
	var copies []string
	scanned := map[string]bool{}
	for _, root := range []string{".", filepath.Join("..", "..", "commands", "complete")} {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && d.Name() == "testdata" {
				return filepath.SkipDir
			}
			// The gateway package itself validates chat requests as
			// clients send them (chat_request.go) and is not a dialect
			// package: the packages below it are.
			if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || (root == "." && filepath.Dir(path) == ".") {
				return nil
			}
			src, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			scanned[filepath.Dir(path)] = true
			copies = append(copies, chatCopies(t, fset, path, src)...)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, dir := range []string{"messages", "responses", filepath.Join("..", "..", "commands", "complete")} {
		if !scanned[dir] {
			t.Errorf("%s was not scanned", dir)
		}
	}
	for _, c := range copies {
		t.Errorf("%s: a chat wire type defined outside domain/chat; use domain/chat's", c)
	}
}

// TestChatCopiesAreFound: the scan finds the copies the dialects had
// before domain/chat (a message, a tool, a content part, a usage, a
// chunk read in a function body) and passes the dialects' own shapes.
func TestChatCopiesAreFound(t *testing.T) {
	for _, tc := range []struct {
		name string
		src  string
		want int
	}{
		{"message", "type chatMessage struct {\n Role string `json:\"role\"`\n Content any `json:\"content\"`\n ToolCalls []chatToolCall `json:\"tool_calls,omitempty\"`\n ToolCallID string `json:\"tool_call_id,omitempty\"`\n}", 1},
		{"tool", "type chatTool struct {\n Type string `json:\"type\"`\n Function struct {\n  Name string `json:\"name\"`\n } `json:\"function\"`\n}", 1},
		{"part", "type chatPart struct {\n Type string `json:\"type\"`\n ImageURL *chatImageURL `json:\"image_url,omitempty\"`\n}", 1},
		{"usage", "type chatUsage struct {\n PromptTokens int64 `json:\"prompt_tokens\"`\n}", 1},
		{"chunk in a function", "func f() {\n var c struct {\n  Choices []struct {\n   Delta struct{ Content *string `json:\"content\"` } `json:\"delta\"`\n   FinishReason *string `json:\"finish_reason\"`\n  } `json:\"choices\"`\n }\n _ = c\n}", 2},
		{"anthropic message", "type message struct {\n ID string `json:\"id\"`\n Role string `json:\"role\"`\n Content []any `json:\"content\"`\n StopReason *string `json:\"stop_reason\"`\n}", 0},
		{"responses function call item", "type callItem struct {\n Type string `json:\"type\"`\n Arguments string `json:\"arguments\"`\n CallID string `json:\"call_id\"`\n Name string `json:\"name\"`\n}", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := chatCopies(t, token.NewFileSet(), "x.go", []byte("package x\n"+tc.src))
			if len(got) != tc.want {
				t.Errorf("found %d copies %v, want %d", len(got), got, tc.want)
			}
		})
	}
}
