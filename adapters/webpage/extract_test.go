package webpage_test

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/arr-dev/arr/adapters/webpage"
	"github.com/arr-dev/arr/domain/text"
)

func prose(s string) webpage.Block { return webpage.Block{Kind: webpage.Prose, Text: s} }
func term(s string) webpage.Block  { return webpage.Block{Kind: webpage.Term, Text: s} }
func item(s string) webpage.Block  { return webpage.Block{Kind: webpage.Item, Text: s} }
func row(s string) webpage.Block   { return webpage.Block{Kind: webpage.Row, Text: s} }
func code(s string) webpage.Block  { return webpage.Block{Kind: webpage.Code, Text: s} }

// sphinxPage is laid out as Sphinx lays out the Python manual: a mobile
// menu, a related bar, the body, a sidebar and a footer around it.
const sphinxPage = `<!DOCTYPE html><html><head><title>json — JSON encoder and decoder &#8212; Python 3.11 documentation</title>
<script>var x = "script text";</script><style>p { color: red }</style></head><body>
<div class="mobile-nav"><nav class="nav-content" role="navigation"><form role="search"><input name="q"/></form></nav></div>
<div class="related" role="navigation" aria-label="related navigation"><h3>Navigation</h3><ul>
<li><a href="genindex.html">index</a></li><li><a href="mailbox.html">next</a> |</li><li><a href="email.html">previous</a> |</li></ul></div>
<div class="document"><div class="documentwrapper"><div class="bodywrapper"><div class="body" role="main">
<section id="module-json"><span id="json-anchor"></span>
<h1><code class="xref">json</code> — JSON encoder and decoder<a class="headerlink" href="#module-json" title="Permalink">¶</a></h1>
<p><strong>Source code:</strong> <a href="https://example.org/json/__init__.py">Lib/json/__init__.py</a></p>
<div class="admonition warning"><p class="admonition-title">Warning</p><p>Be cautious when parsing JSON data from untrusted sources.</p></div>
<section id="basic-usage"><h2>Basic Usage<a class="headerlink" href="#basic-usage">¶</a></h2>
<p>Serialize <em>obj</em> as a JSON formatted stream.</p>
</section>
<section id="encoders-and-decoders"><h2>Encoders and Decoders<a class="headerlink" href="#encoders-and-decoders">¶</a></h2>
<p>Simple JSON decoder.</p>
<section id="exceptions"><h3>Exceptions<a class="headerlink" href="#exceptions">¶</a></h3>
<p>Subclass of ValueError.</p>
</section></section>
<section id="cli"><h2>Command Line Interface<a class="headerlink" href="#cli">¶</a></h2>
<p>The json.tool module validates JSON.</p>
</section></section>
</div></div></div>
<div class="sphinxsidebar" role="navigation" aria-label="main navigation"><div class="sphinxsidebarwrapper">
<h3>Table of Contents</h3><ul><li><a href="#">json</a></li></ul><h4>Previous topic</h4><p class="topless"><a href="email.html">email</a></p>
</div></div></div>
<div class="footer">&copy; Copyright 2001-2023, Python Software Foundation. Last updated on Feb 08, 2023.</div>
</body></html>`

func TestExtract(t *testing.T) {
	h1 := "json — JSON encoder and decoder"
	cases := []struct {
		name        string
		contentType string // default text/html
		body        string
		title       string
		want        []webpage.Section
		text        string   // Page.Text, when checked
		absent      []string // in no block, heading or title
	}{
		{
			name: "Sphinx page: navigation dropped, every section under its heading path",
			body: sphinxPage, title: h1,
			want: []webpage.Section{
				{Heading: []string{h1}, Anchor: "module-json", Blocks: []webpage.Block{
					prose("Source code: Lib/json/__init__.py"),
					prose("Warning: Be cautious when parsing JSON data from untrusted sources."),
				}},
				{Heading: []string{h1, "Basic Usage"}, Anchor: "basic-usage", Blocks: []webpage.Block{prose("Serialize obj as a JSON formatted stream.")}},
				{Heading: []string{h1, "Encoders and Decoders"}, Anchor: "encoders-and-decoders", Blocks: []webpage.Block{prose("Simple JSON decoder.")}},
				{Heading: []string{h1, "Encoders and Decoders", "Exceptions"}, Anchor: "exceptions", Blocks: []webpage.Block{prose("Subclass of ValueError.")}},
				{Heading: []string{h1, "Command Line Interface"}, Anchor: "cli", Blocks: []webpage.Block{prose("The json.tool module validates JSON.")}},
			},
			text: h1 + "\nSource code: Lib/json/__init__.py\nWarning: Be cautious when parsing JSON data from untrusted sources.\n\n" +
				"Basic Usage\nSerialize obj as a JSON formatted stream.\n\nEncoders and Decoders\nSimple JSON decoder.\n\n" +
				"Exceptions\nSubclass of ValueError.\n\nCommand Line Interface\nThe json.tool module validates JSON.",
			absent: []string{"¶", "Navigation", "previous", "Previous topic", "Table of Contents", "Copyright", "script text", "color: red"},
		},
		{
			name: "no main element: body without nav, header, footer, sidebar; headings never glued",
			body: `<html><body><header><a href="/">Home</a></header><div class="breadcrumbs"><a>Prev</a> <a>Up</a> <a>Home</a> <a>Next</a></div>
<a class="skip-link" href="#content">Skip to content</a>
<div id="content"><h2 id="setup">Setup</h2>Install it.<h2>Usage</h2><div>Run it</div><div>daily.</div></div>
<aside><p>Related posts</p></aside><div class="cookie-banner">We use cookies.</div><footer>Contact us</footer></body></html>`,
			title: "",
			want: []webpage.Section{
				{Heading: []string{"Setup"}, Anchor: "setup", Blocks: []webpage.Block{prose("Install it.")}},
				{Heading: []string{"Usage"}, Blocks: []webpage.Block{prose("Run it"), prose("daily.")}},
			},
			absent: []string{"Prev", "Skip to", "Related posts", "cookies", "Contact us"},
		},
		{
			name: "article: its header, footer and footnote kept, the page's dropped",
			body: `<html><head><title>Tides - Ocean Facts</title></head><body><header>Ocean Facts</header><nav>Shop</nav>
<article><header><h1>How tides work</h1><p>By A. Writer</p></header><p>Tides rise and fall.</p>
<aside class="footnote" role="note"><p>[1] Mostly the Moon.</p></aside><footer>Filed under oceans.</footer></article>
<footer>All rights reserved.</footer></body></html>`,
			title: "How tides work",
			want: []webpage.Section{{Heading: []string{"How tides work"}, Blocks: []webpage.Block{
				prose("By A. Writer"), prose("Tides rise and fall."), prose("[1] Mostly the Moon."), prose("Filed under oceans."),
			}}},
			absent: []string{"Ocean Facts", "Shop", "All rights reserved"},
		},
		{
			name: "dl API entry: the signature a term, the description prose with its nested content",
			body: `<main><dl class="py function"><dt class="sig" id="json.dumps"><span class="sig-prename">json.</span><span class="sig-name">dumps</span><span class="sig-paren">(</span><em class="sig-param">obj</em>, <em class="sig-param">*</em>, <em class="sig-param">skipkeys<span class="o">=</span><span class="default_value">False</span></em><span class="sig-paren">)</span><a class="headerlink" href="#json.dumps">¶</a></dt>
<dd><p>Serialize <em>obj</em> to a JSON formatted <code>str</code>.</p><ul><li><p>If <em>skipkeys</em> is true, keys are skipped.</p></li><li>Else <code>TypeError</code>.</li></ul>
<dl><dt>Parameters<span class="colon">:</span></dt><dd><p>obj – any object</p></dd></dl></dd></dl></main>`,
			want: []webpage.Section{{Blocks: []webpage.Block{
				term("json.dumps(obj, *, skipkeys=False)"),
				prose("Serialize obj to a JSON formatted str."),
				item("If skipkeys is true, keys are skipped."), item("Else TypeError."),
				term("Parameters:"), prose("obj – any object"),
			}}},
		},
		{
			name: "text before a nested block keeps its own kind",
			body: `<main><dl><dt>T</dt><dd>Description <dl><dt>inner</dt><dd>x</dd></dl>after</dd></dl><ul><li>lead<blockquote>quote</blockquote>tail</li></ul></main>`,
			want: []webpage.Section{{Blocks: []webpage.Block{
				term("T"), prose("Description"), term("inner"), prose("x"), prose("after"), item("lead"), prose("quote"), item("tail"),
			}}},
		},
		{
			name: "table with a head: every row as Header: cell",
			body: `<main><h1>Codes</h1><table><caption>Status codes</caption><thead><tr><th>Code</th><th>Meaning</th><th>Since</th></tr></thead><tbody>
<tr><td>200</td><td><p>OK</p></td><td>1.0</td></tr><tr><td>404</td><td>Not <b>Found</b></td><td></td></tr>
<tr><td rowspan="2">5xx</td><td colspan="2">Server error</td></tr><tr><td>Gateway</td><td>1.1</td></tr></tbody></table></main>`,
			title: "Codes",
			want: []webpage.Section{{Heading: []string{"Codes"}, Blocks: []webpage.Block{
				prose("Status codes"),
				row("Code: 200; Meaning: OK; Since: 1.0"),
				row("Code: 404; Meaning: Not Found"),
				row("Code: 5xx; Meaning: Server error"),
				row("Code: 5xx; Meaning: Gateway; Since: 1.1"),
			}}},
		},
		{
			name: "table without a head, and a layout table read as blocks",
			body: `<main><table><tr><td>a</td><td>b</td></tr><tr><td>c</td><td>d</td></tr></table>
<table><tr><td><h2>Left</h2><p>one</p></td><td><table><tr><td>x</td><td>y</td></tr><tr><td>z</td><td>w</td></tr></table></td></tr></table></main>`,
			want: []webpage.Section{
				{Blocks: []webpage.Block{row("a | b"), row("c | d")}},
				{Heading: []string{"Left"}, Blocks: []webpage.Block{prose("one"), row("x | y"), row("z | w")}},
			},
		},
		{
			name: "code kept apart from prose, verbatim",
			body: `<main><p>Encoding:</p><div class="highlight"><pre><span class="gp">&gt;&gt;&gt; </span><span class="n">json</span>.dumps([1, 2])
<span class="go">'[1, 2]'</span>
    indented
</pre></div><p>And JSON:</p><pre>{
  "a": 1
}</pre></main>`,
			want: []webpage.Section{{Blocks: []webpage.Block{
				prose("Encoding:"), code(">>> json.dumps([1, 2])\n'[1, 2]'\n    indented"),
				prose("And JSON:"), code("{\n  \"a\": 1\n}"),
			}}},
			text: "Encoding:\nAnd JSON:",
		},
		{
			name: "inline elements join with the spacing of the page",
			body: `<main><p>call <code>f()</code>.</p><p>a<b>b</b>c</p><p>a <em>b</em></p><p>line<br>break</p>
<p>  spaced
   out  </p><p>x <a href="#"><span>y</span></a>, z</p></main>`,
			want: []webpage.Section{{Blocks: []webpage.Block{
				prose("call f()."), prose("abc"), prose("a b"), prose("line break"), prose("spaced out"), prose("x y, z"),
			}}},
		},
		{
			name: "entities decoded",
			body: `<main><p>&amp; &lt;tag&gt; caf&eacute; &#8212; &#x2014;&nbsp;a&quot;b&#39;</p></main>`,
			want: []webpage.Section{{Blocks: []webpage.Block{prose(`& <tag> café — — a"b'`)}}},
		},
		{
			name: "control characters cleaned",
			body: "<main><h1>Ti\x01tle</h1><p>nul\x00here &#1; bell\x07 c1\u0085 &#127;ok</p><pre>a\x00b\x1b\n\tc</pre></main>",
			want: []webpage.Section{{Heading: []string{"Title"}, Blocks: []webpage.Block{
				prose("nulhere bell c1 ok"), code("ab\n\tc"),
			}}},
			title: "Title",
		},
		{
			name: "lists: one item per li, nested lists their own items",
			body: `<main><ul><li>one</li><li>two<ul><li>two.a</li></ul></li></ul><ol><li><p>first</p></li></ol></main>`,
			want: []webpage.Section{{Blocks: []webpage.Block{item("one"), item("two"), item("two.a"), item("first")}}},
		},
		{
			name:        "markdown: headings, fences, lists, tables",
			contentType: "text/markdown",
			body: "---\ntitle: front matter\n---\n# Guide\n\nIntro with a [link](https://x.example) and `code`\nover two lines.\n\n## Install\n\n" +
				"- one\n- two\n  continued\n1. first\n\n```sh\n$ go install ./...\n\n  done\n```\n\n| Flag | Meaning |\n|------|---------|\n| -v | verbose |\n| -q | quiet \\| silent |\n\n" +
				"Usage\n-----\n\n> quoted\n> text\n\n    indented code\n\na | b\n",
			title: "Guide",
			want: []webpage.Section{
				{Heading: []string{"Guide"}, Blocks: []webpage.Block{prose("Intro with a link and code over two lines.")}},
				{Heading: []string{"Guide", "Install"}, Blocks: []webpage.Block{
					item("one"), item("two continued"), item("first"), code("$ go install ./...\n\n  done"),
					row("Flag: -v; Meaning: verbose"), row("Flag: -q; Meaning: quiet | silent"),
				}},
				{Heading: []string{"Guide", "Usage"}, Blocks: []webpage.Block{prose("quoted text"), code("indented code"), prose("a | b")}},
			},
			absent: []string{"front matter", "```", "](", "#"},
		},
		{
			name:        "plain text: paragraphs in one section",
			contentType: "text/plain",
			body:        "Tides\nrise and fall.\n\n\nTwice a day.\x00\n",
			title:       "Tides rise and fall.",
			want:        []webpage.Section{{Blocks: []webpage.Block{prose("Tides rise and fall."), prose("Twice a day.")}}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ct := tc.contentType
			if ct == "" {
				ct = "text/html"
			}
			p, err := webpage.Extract(webpage.Raw{URL: "https://docs.example/p", ContentType: ct, Body: []byte(tc.body)})
			if err != nil {
				t.Fatal(err)
			}
			if p.URL != "https://docs.example/p" || p.Title != tc.title {
				t.Errorf("URL %q, title %q; want title %q", p.URL, p.Title, tc.title)
			}
			if !reflect.DeepEqual(p.Sections, tc.want) {
				t.Errorf("sections:\n%s\nwant:\n%s", dump(p.Sections), dump(tc.want))
			}
			if tc.text != "" && p.Text != tc.text {
				t.Errorf("text:\n%q\nwant:\n%q", p.Text, tc.text)
			}
			all := p.Title + "\n" + dump(p.Sections)
			for _, junk := range tc.absent {
				if strings.Contains(all, junk) {
					t.Errorf("%q kept", junk)
				}
			}
			if !text.Valid(all) || !text.Valid(p.Text) {
				t.Errorf("control characters kept: %q", all)
			}
		})
	}
}

func TestExtractLongTable(t *testing.T) {
	var b strings.Builder
	b.WriteString(`<html><body><nav>Prev Up Home Next</nav><div class="body" role="main"><h1>Reference</h1><table><thead><tr><th>Name</th><th>Value</th></tr></thead><tbody>`)
	want := []webpage.Block{}
	for i := range 300 {
		fmt.Fprintf(&b, "<tr><td><code>NAME_%d</code></td><td><p>value %d</p></td></tr>\n", i, i)
		want = append(want, row(fmt.Sprintf("Name: NAME_%d; Value: value %d", i, i)))
	}
	b.WriteString(`</tbody></table></div></body></html>`)
	p, err := webpage.Extract(webpage.Raw{URL: "u", ContentType: "text/html", Body: []byte(b.String())})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Sections) != 1 || !reflect.DeepEqual(p.Sections[0].Blocks, want) {
		t.Fatalf("got %d sections:\n%s", len(p.Sections), dump(p.Sections))
	}
	if strings.Count(p.Text, "\n") != 300 || strings.Contains(p.Text, "Prev") {
		t.Errorf("text: %q", p.Text)
	}
}

func TestExtractRefusesEmptyHTML(t *testing.T) {
	for _, tc := range []struct{ name, body string }{
		{name: "empty", body: ""},
		{name: "navigation only", body: `<nav><a href="/">Home</a></nav><footer>Contact</footer>`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if p, err := webpage.Extract(webpage.Raw{URL: "u", ContentType: "text/html", Body: []byte(tc.body)}); err == nil {
				t.Fatalf("got %+v, want an error", p)
			}
		})
	}
}

func dump(ss []webpage.Section) string {
	var b strings.Builder
	for _, s := range ss {
		fmt.Fprintf(&b, "== %q anchor=%s\n", s.Heading, s.Anchor)
		for _, bl := range s.Blocks {
			fmt.Fprintf(&b, "  [%s] %q\n", bl.Kind, bl.Text)
		}
	}
	return b.String()
}

// referencePage is a Sphinx-like reference page of about size bytes: the
// menus, related bar and sidebar of the Python manual around sections of
// paragraphs, an API entry, a table and a listing.
func referencePage(size int) []byte {
	var b strings.Builder
	b.WriteString(`<!DOCTYPE html><html><head><title>ref</title><script src="x.js"></script></head><body>
<div class="related" role="navigation"><ul><li><a href="a.html">previous</a></li><li><a href="b.html">next</a></li></ul></div>
<div class="document"><div class="body" role="main"><section id="top"><h1>Reference<a class="headerlink" href="#top">¶</a></h1>`)
	for i := 0; b.Len() < size-600; i++ {
		fmt.Fprintf(&b, `<section id="s%d"><h2>Section %d<a class="headerlink" href="#s%d">¶</a></h2>
<p>The <a class="reference internal" href="#f"><code class="xref"><span class="pre">f%d()</span></code></a> function returns <em>a value</em> computed from its arguments; see <a href="#s">the notes</a>.</p>
<dl class="py function"><dt id="f%d"><span class="sig-name">f%d</span><span class="sig-paren">(</span><em>x</em>, <em>y=None</em><span class="sig-paren">)</span></dt><dd><p>Return <em>x</em> plus <em>y</em>.</p></dd></dl>
<table class="docutils"><thead><tr><th><p>Operation</p></th><th><p>Result</p></th></tr></thead><tbody><tr><td><p><code>x + y</code></p></td><td><p>sum</p></td></tr><tr><td><p><code>x - y</code></p></td><td><p>difference</p></td></tr></tbody></table>
<div class="highlight"><pre><span class="gp">&gt;&gt;&gt; </span><span class="n">f%d</span>(1, 2)
<span class="go">3</span></pre></div></section>
`, i, i, i, i, i, i, i)
	}
	b.WriteString(`</section></div><div class="sphinxsidebar" role="navigation"><h3>Table of Contents</h3></div></div><div class="footer">© PSF</div></body></html>`)
	return []byte(b.String())
}

func BenchmarkExtract50KB(b *testing.B) {
	page := referencePage(50 << 10)
	b.SetBytes(int64(len(page)))
	for b.Loop() {
		if _, err := webpage.Extract(webpage.Raw{URL: "u", ContentType: "text/html", Body: page}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParse50KB is html.Parse alone on the page of
// BenchmarkExtract50KB: the floor under extraction's cost.
func BenchmarkParse50KB(b *testing.B) {
	page := referencePage(50 << 10)
	b.SetBytes(int64(len(page)))
	for b.Loop() {
		if _, err := html.Parse(bytes.NewReader(page)); err != nil {
			b.Fatal(err)
		}
	}
}
