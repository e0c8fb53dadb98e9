package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/arr-dev/arr/commands/research"
	"github.com/arr-dev/arr/domain/answer"
	"github.com/arr-dev/arr/domain/answer/terms"
	"github.com/arr-dev/arr/migrations/migratetest"
	"github.com/arr-dev/arr/projections/answerdocs"
)

// set is a question set over one manual.
type set struct {
	name, root, pages string
	questions         []string
}

var sets = []set{
	{"python", "/usr/share/doc/python3.11/html", "scripts/eval/pages.txt", []string{"scripts/eval/questions.json", "scripts/eval/train/python.json"}},
	{"git", "/usr/share/doc/git/html", "scripts/eval/git/pages.txt", []string{"scripts/eval/git/questions.json", "scripts/eval/train/git.json"}},
}

// engine ranks passages for a question.
type engine struct {
	name   string
	search func(ctx context.Context, q string, n int) ([]answer.IndexedPassage, error)
}

var ks = []int{1, 5, 10, 20}

// recall prints recall@k (a passage holding the fact, as the answer
// evaluation matches facts, among the best k) of each engine on each
// question set, and each engine's mean search time. The manuals are
// loaded into a PostgreSQL database of their own (dropped and made again)
// through the answer_docs projection's write (answerdocs.Store).
func recall(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("recall", flag.ContinueOnError)
	db := fs.String("db", migratetest.AdminURL(), "the PostgreSQL server (its admin database)")
	only := fs.String("engines", "", "measure only the engines whose name holds this")
	if err := fs.Parse(args); err != nil {
		return err
	}
	fmt.Println("| manual | question set | questions | engine | R@1 | R@5 | R@10 | R@20 | mean ms |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|")
	for _, s := range sets {
		if err := recallSet(ctx, *db, s, *only); err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
	}
	return nil
}

func recallSet(ctx context.Context, admin string, s set, only string) error {
	docs, err := loadDocs(s.root, s.pages)
	if err != nil {
		return err
	}
	pool, err := loadDatabase(ctx, admin, "arr_eval_retrieval_"+s.name, docs)
	if err != nil {
		return err
	}
	defer pool.Close()
	var ps []answer.IndexedPassage
	for _, d := range docs {
		for _, p := range answer.Passages(d) {
			ps = append(ps, answer.IndexedPassage{Passage: p, Title: d.Title, URL: d.URL})
		}
	}
	engines := engines(pool, ps)
	for _, qf := range s.questions {
		qs, err := readQuestions(qf)
		if err != nil {
			return err
		}
		for _, e := range engines {
			if !strings.Contains(e.name, only) {
				continue
			}
			line, err := measure(ctx, e, qs)
			if err != nil {
				return fmt.Errorf("%s: %w", e.name, err)
			}
			fmt.Printf("| %s | %s | %s |\n", s.name, qf, line)
		}
	}
	return nil
}

// loadDatabase makes database name afresh and writes docs into its
// answer_docs read model through the projection's write.
func loadDatabase(ctx context.Context, admin, name string, docs []answer.DocumentIndexed) (*pgxpool.Pool, error) {
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		return nil, err
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `DROP DATABASE IF EXISTS `+name+` WITH (FORCE)`); err != nil {
		return nil, err
	}
	if _, err := conn.Exec(ctx, `CREATE DATABASE `+name); err != nil {
		return nil, err
	}
	pool, err := pgxpool.New(ctx, migratetest.WithDatabase(admin, name))
	if err != nil {
		return nil, err
	}
	spec := answerdocs.Projection{}.Spec()
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `CREATE SCHEMA rm_answer_docs; SET LOCAL search_path TO rm_answer_docs`); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, spec.DDL+spec.DeferredDDL); err != nil {
			return err
		}
		pos := make([]int64, len(docs))
		for i := range pos {
			pos[i] = int64(i + 1)
		}
		return answerdocs.Store(ctx, tx, docs, pos)
	})
	if err == nil {
		_, err = pool.Exec(ctx, `ANALYZE; ALTER TABLE rm_answer_docs.passages ADD COLUMN tsv_en tsvector;
			UPDATE rm_answer_docs.passages p SET tsv_en = setweight(to_tsvector('english', d.title), 'A') ||
				setweight(to_tsvector('english', array_to_string(p.heading, ' ')), 'B') || setweight(to_tsvector('english', p.body), 'C')
			FROM rm_answer_docs.documents d WHERE d.doc_id = p.doc_id`)
	}
	if err != nil {
		pool.Close()
		return nil, err
	}
	return pool, nil
}

// engines are the candidates measured: BM25F in memory, PostgreSQL
// full-text search ranked by ts_rank_cd (over its own English
// configuration, and over the projection's tsvector of arr's terms), and
// the hybrid (research.Stored) at several candidate pools.
func engines(pool *pgxpool.Pool, ps []answer.IndexedPassage) []engine {
	x := research.BuildIndex(ps, 1, research.DefaultWeights)
	out := []engine{{"bm25f (memory)", func(_ context.Context, q string, n int) ([]answer.IndexedPassage, error) {
		return passagesOf(x.Search(q, n)), nil
	}}}
	out = append(out, engine{"pg fts english ts_rank_cd", func(ctx context.Context, q string, n int) ([]answer.IndexedPassage, error) {
		return ftsSearch(ctx, pool, `tsv_en`, `replace(plainto_tsquery('english', $1)::text, ' & ', ' | ')::tsquery`, q, n)
	}})
	out = append(out, engine{"pg fts arr terms ts_rank_cd", func(ctx context.Context, q string, n int) ([]answer.IndexedPassage, error) {
		var qs []string
		for _, t := range uniqueTerms(research.Terms(q)) {
			qs = append(qs, terms.Quote(t))
		}
		if len(qs) == 0 {
			return nil, nil
		}
		return ftsSearch(ctx, pool, `tsv`, `$1::tsquery`, strings.Join(qs, " | "), n)
	}})
	for _, size := range []int{100, 300, 1000, 5000} {
		s := research.NewStored(answerdocs.NewQueries(pool), research.DefaultWeights)
		s.Pool = size
		out = append(out, engine{fmt.Sprintf("hybrid gin+bm25f pool %d", size), func(ctx context.Context, q string, n int) ([]answer.IndexedPassage, error) {
			got, _, err := s.SearchPassages(ctx, q, n)
			return passagesOf(got), err
		}})
	}
	return out
}

func ftsSearch(ctx context.Context, pool *pgxpool.Pool, column, query, q string, n int) ([]answer.IndexedPassage, error) {
	rows, err := pool.Query(ctx, `WITH q AS (SELECT `+query+` AS q)
		SELECT p.doc_id, p.seq, p.heading, p.body, d.url FROM rm_answer_docs.passages p JOIN rm_answer_docs.documents d USING (doc_id), q
		WHERE p.`+column+` @@ q.q ORDER BY ts_rank_cd('{0.1,0.5,1,0.75}', p.`+column+`, q.q, 1) DESC, p.doc_id, p.seq LIMIT $2`, q, n)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (answer.IndexedPassage, error) {
		var p answer.IndexedPassage
		err := r.Scan(&p.DocID, &p.Seq, &p.Heading, &p.Text, &p.URL)
		return p, err
	})
}

func passagesOf(ss []research.Scored) []answer.IndexedPassage {
	out := make([]answer.IndexedPassage, len(ss))
	for i, s := range ss {
		out[i] = s.IndexedPassage
	}
	return out
}

func uniqueTerms(ts []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, t := range ts {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}

// rquestion is a question with its facts as the answer evaluation writes
// them: alternatives, each a list of strings all of which match ("re:"
// a regular expression), over lower-case text with quotes made plain.
type rquestion struct {
	Question string
	Facts    [][]string
	alts     [][]func(string) bool
}

func readQuestions(path string) ([]rquestion, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var qs []rquestion
	if err := json.Unmarshal(b, &qs); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	kept := qs[:0]
	for _, q := range qs {
		for _, alt := range q.Facts {
			var ms []func(string) bool
			for _, s := range alt {
				if re, ok := strings.CutPrefix(s, "re:"); ok {
					m, err := regexp.Compile(re)
					if err != nil {
						return nil, fmt.Errorf("%s: %q: %w", path, s, err)
					}
					ms = append(ms, m.MatchString)
					continue
				}
				lit := normalize(s)
				ms = append(ms, func(t string) bool { return strings.Contains(t, lit) })
			}
			q.alts = append(q.alts, ms)
		}
		if len(q.alts) > 0 { // unanswerable questions have no passage to find
			kept = append(kept, q)
		}
	}
	return kept, nil
}

var plain = strings.NewReplacer("\u2018", "'", "\u2019", "'", "\u201c", `"`, "\u201d", `"`, "\u00a0", " ", "\u202f", " ", "\u00b6", " ", "\u200b", "")

func normalize(s string) string {
	return strings.ToLower(strings.Join(strings.Fields(plain.Replace(s)), " "))
}

// holds reports whether passage p states q's fact.
func (q rquestion) holds(p answer.IndexedPassage) bool {
	t := normalize(strings.Join(p.Heading, " ") + " " + p.Text)
	for _, alt := range q.alts {
		all := true
		for _, m := range alt {
			all = all && m(t)
		}
		if all {
			return true
		}
	}
	return false
}

// measure is e's line of the table on qs.
func measure(ctx context.Context, e engine, qs []rquestion) (string, error) {
	hits := make([]int, len(ks))
	var total time.Duration
	for _, q := range qs {
		t := time.Now()
		got, err := e.search(ctx, q.Question, ks[len(ks)-1])
		total += time.Since(t)
		if err != nil {
			return "", err
		}
		first := -1
		for i, p := range got {
			if q.holds(p) {
				first = i
				break
			}
		}
		for i, k := range ks {
			if first >= 0 && first < k {
				hits[i]++
			}
		}
	}
	cells := []string{fmt.Sprint(len(qs)), e.name}
	for _, h := range hits {
		cells = append(cells, fmt.Sprintf("%.1f%%", 100*float64(h)/float64(max(len(qs), 1))))
	}
	cells = append(cells, fmt.Sprintf("%.1f", float64(total.Microseconds())/1000/float64(max(len(qs), 1))))
	return strings.Join(cells, " | "), nil
}
