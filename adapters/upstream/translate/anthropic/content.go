package anthropic

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	"github.com/arr-dev/arr/domain/chat"
)

// imageTypes are the media types of Anthropic's base64 image sources.
var imageTypes = map[string]bool{"image/jpeg": true, "image/png": true, "image/gif": true, "image/webp": true}

// userBlocks reads a user message's content: a string as one text block
// (none when empty), parts as text, image and document blocks.
func userBlocks(param string, raw json.RawMessage) ([]block, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, invalid("missing_content", param, "a user message needs content")
	}
	if raw[0] == '"' {
		text, err := textOf(param, raw)
		if err != nil || text == "" {
			return []block{}, err
		}
		return []block{textBlock(text)}, nil
	}
	parts, err := readParts(param, raw)
	if err != nil {
		return nil, err
	}
	blocks := make([]block, 0, len(parts))
	for j, p := range parts {
		b, err := partBlock(fmt.Sprintf("%s[%d]", param, j), p)
		if err != nil {
			return nil, err
		}
		if b.Type == "text" && *b.Text == "" {
			continue // Anthropic refuses empty text blocks
		}
		blocks = append(blocks, b)
	}
	return blocks, nil
}

func partBlock(pp string, p chat.Part) (block, error) {
	switch p.Type {
	case "text":
		if p.Text == nil {
			return block{}, invalid("invalid_value", pp+".text", "a text part needs text")
		}
		return textBlock(*p.Text), nil
	case "image_url":
		if p.ImageURL == nil || p.ImageURL.URL == "" {
			return block{}, invalid("invalid_value", pp+".image_url.url", "an image_url part needs a url")
		}
		s, err := imageSource(pp+".image_url.url", p.ImageURL.URL)
		return block{Type: "image", Source: s}, err
	case "file":
		return fileBlock(pp, p.File)
	}
	return block{}, invalid("unsupported_value", pp+".type", "content parts of type %q are not supported for this model: text, image_url and file (a PDF) are", p.Type)
}

// imageSource: a data: URL as a base64 source, an http(s) URL as a url
// source (Anthropic fetches it).
func imageSource(param, u string) (*source, error) {
	if rest, ok := strings.CutPrefix(u, "data:"); ok {
		mediaType, data, ok := strings.Cut(rest, ";base64,")
		if !ok || data == "" {
			return nil, invalid("invalid_value", param, "an image data: URL must be data:<media type>;base64,<data>")
		}
		if !imageTypes[mediaType] {
			return nil, invalid("unsupported_value", param, "images are image/jpeg, image/png, image/gif or image/webp for this model, not %q", mediaType)
		}
		if !isBase64(data) {
			return nil, invalid("invalid_value", param, "an image data: URL's data must be base64 (RFC 4648, padded, no line breaks)")
		}
		return &source{Type: "base64", MediaType: mediaType, Data: data}, nil
	}
	pu, err := url.Parse(u)
	if err != nil || (pu.Scheme != "https" && pu.Scheme != "http") || pu.Host == "" {
		return nil, invalid("invalid_value", param, "an image URL must be an http(s) URL or a data: URL")
	}
	return &source{Type: "url", URL: u}, nil
}

// fileBlock: a PDF data: URL as a base64 document (its filename as the
// title); other files are refused.
func fileBlock(pp string, f *chat.File) (block, error) {
	if f == nil || f.FileData == "" {
		return block{}, invalid("unsupported_value", pp+".file", "a file part needs file_data (a data: URL; arr stores no files, so file_id is not supported)")
	}
	data, ok := strings.CutPrefix(f.FileData, "data:application/pdf;base64,")
	if !ok || data == "" {
		return block{}, invalid("unsupported_value", pp+".file.file_data", "files are PDFs for this model: data:application/pdf;base64,…")
	}
	if !isBase64(data) {
		return block{}, invalid("invalid_value", pp+".file.file_data", "a file's data must be base64 (RFC 4648, padded, no line breaks)")
	}
	return block{Type: "document", Source: &source{Type: "base64", MediaType: "application/pdf", Data: data}, Title: f.Filename}, nil
}

// isBase64 says whether s is standard base64 as Anthropic's base64
// sources take it: padded to a multiple of 4, the alphabet only (no line
// breaks), the unused bits of the last group zero. It decodes only the
// last group, so a large image costs one scan and no copy.
func isBase64(s string) bool {
	if len(s) == 0 || len(s)%4 != 0 {
		return false
	}
	last := s[len(s)-4:]
	for i := 0; i < len(s)-4; i++ {
		c := s[i]
		if !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '+' || c == '/') {
			return false
		}
	}
	_, err := base64.StdEncoding.Strict().DecodeString(last)
	return err == nil && !strings.ContainsAny(last, "\r\n")
}
