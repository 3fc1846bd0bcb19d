package agentmem_test

import (
	"go/build"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/agentmem/agentmem"

// allowed lists, for each package of the module, the module packages it may
// import (STYLE.md §1); "std" alone means the standard library only. A
// package missing here fails the test, so a new package must declare its
// place. Third-party imports are checked only for the root package.
var allowed = map[string][]string{
	".":         {"std"},
	"sqlite":    {".", "internal/vecenc"},
	"postgres":  {".", "internal/vecenc"},
	"storetest": {"."},
	"tokens":    {"."},
	// The faces (httpapi, proxy, mcp, web, langchaingo, client) call
	// agentmem.Service, never core, and never each other: what two HTTP
	// faces share is in internal/httpx, the tools in tools.
	"httpapi": {".", "tools", "internal/httpx"}, // handlers call the service, and run the tools for agents not on MCP
	"proxy":   {".", "internal/httpx"},          // served by httpapi (Options.Proxy), which authenticates its callers
	// metrics owns Prometheus and OpenTelemetry: the faces take its
	// middleware and recorders through their options, cmd/agentmem wires
	// them; it reads the service's stats through an interface of its own.
	"metrics": {"."},
	// The tools for agents, defined once (MCP and REST adapt them), call
	// the service, in process or over REST.
	"tools": {"."},
	// The MCP server offers the tools.
	"mcp": {".", "tools", "internal/httpx"},
	// The web UI is static files; its script calls the API.
	"web": {"std"},
	// The langchaingo adapter works over any agentmem.Service.
	"langchaingo": {"."},
	"core":        {".", "window", "retrieve", "index", "reflection", "profile", "reembed"},
	// app wires agentmem in process (library mode, and the command's).
	"app":      {".", "core", "window", "retrieve", "extract", "extract/learned", "index", "entity", "reflection", "profile", "reembed", "worker", "sqlite", "postgres", "llm/openai", "llm/lexical", "llm/minilm", "tokens"},
	"retrieve": {".", "internal/vecenc"},
	// The calibration of search's relevance, fitted on its corpus.
	"retrieve/calibrate": {".", "retrieve", "llm/minilm"},
	// The memory pipeline: what every model call shares, then one package
	// per job. index runs extraction and entities on new messages;
	// reembed embeds as index does; reflection finds a thread's topics as
	// index does and asks for the profile.
	"prompt":  {"."},
	"extract": {".", "prompt", "extract/learned"},
	// The classifiers the no-model pipeline learned, and their training
	// over the built-in model's embeddings.
	"extract/learned":       {"std"},
	"extract/learned/train": {".", "extract", "extract/learned", "llm/minilm"},
	"entity":                {".", "prompt"},
	"index":                 {".", "extract", "entity", "prompt"},
	"reembed":               {".", "index"},
	"reflection":            {".", "extract", "index", "profile", "prompt"},
	"profile":               {".", "prompt"},
	"window":                {"."},
	"client":                {"."},
	"worker":                {"."},
	"llm/openai":            {"."},
	"llm/lexical":           {"."},
	"llm/minilm":            {"."},
	"llm/llmtest":           {"std"}, // a fake model server for any package's tests: stdlib only
	"eval/locomo":           {"."},   // its own Searcher and Indexer over the stores; cmd passes the token counter and the searcher
	"cmd/agentmem":          {"*"},
	// The library-mode example opens agentmem through app, as a Go program would.
	"examples/agentloop": {".", "app", "llm/openai"},
	// internal/testutil holds test helpers and may open any backend.
	"internal/testutil": {"*"},
	// internal/apptest opens agentmem in process for the faces' tests.
	"internal/apptest": {"app"},
	// internal/goldenfile compares test output with golden files.
	"internal/goldenfile": {"*"},
	// internal/workload generates the speed benchmarks' everyday text.
	"internal/workload": {},
	// internal/httpx is what the HTTP faces share: statuses of error
	// codes, OpenAI's error shape, whose user a request speaks for.
	"internal/httpx": {"."},
	// internal/vecenc is the byte format of stored vectors, both stores'.
	"internal/vecenc": {"."},
	// internal/plot draws the reliability suite's charts (standard
	// library and x/image only).
	"internal/plot": {},

	// faults is the fault suite: its tests build and run the binary, and
	// read the databases with their drivers; the package itself is a doc.
	"faults": {"std"},

	// eval/extraction runs an extractor and the consolidator over its corpus;
	// cmd passes the store and the embedder.
	"eval/extraction": {".", "extract"},
	// eval/memory drives any agentmem.Service; cmd passes serve's, with no model.
	"eval/memory": {"."},
}

// TestDependencies keeps the layering of STYLE.md: the domain imports the
// standard library only; storage and adapters import the domain and never
// each other; only cmd/agentmem wires everything together. Test files may
// import more (storetest, tokens, sqlite for fixtures).
func TestDependencies(t *testing.T) {
	err := filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		if name := d.Name(); path != "." && (strings.HasPrefix(name, ".") || name == "testdata" || name == "docs") {
			return filepath.SkipDir
		}
		pkg, err := build.ImportDir(path, 0)
		if _, ok := err.(*build.NoGoError); ok {
			return nil
		} else if err != nil {
			return err
		}
		rel := filepath.ToSlash(path)
		rules, ok := allowed[rel]
		if !ok {
			t.Errorf("package %s is not in the dependency rules of deps_test.go", rel)
			return nil
		}
		for _, imp := range pkg.Imports {
			if !allowedImport(rules, imp) {
				t.Errorf("package %s imports %s, which STYLE.md's layering forbids (allowed: %v)", rel, imp, rules)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func allowedImport(rules []string, imp string) bool {
	internal := imp == module || strings.HasPrefix(imp, module+"/")
	std := !strings.Contains(strings.Split(imp, "/")[0], ".")
	switch {
	case std:
		return true
	case len(rules) == 1 && rules[0] == "std":
		return false
	case !internal:
		return true // third-party libraries are each adapter's own choice
	}
	for _, r := range rules {
		if r == "*" || (r == "." && imp == module) || imp == module+"/"+r {
			return true
		}
	}
	return false
}

// faces are the packages through which agentmem is reached: each calls
// agentmem.Service. Only the wiring (cmd/agentmem, app's examples and
// tests) may import them.
var faces = []string{"httpapi", "proxy", "mcp", "web", "langchaingo", "client", "tools"}

// TestLayers: whatever the allow-list above says, no face imports core or
// another face (tools, which two faces adapt, aside), and no package
// below the faces (the service, engines, stores, the domain) imports a
// face: the import graph runs faces → service → engines → domain, with
// no arrow back up. The entries of allowed may not grant an exception.
func TestLayers(t *testing.T) {
	isFace := func(p string) bool { return slices.Contains(faces, p) }
	for pkg, rules := range allowed {
		for _, r := range rules {
			switch {
			case r == "*" || r == "std" || r == ".":
			case isFace(pkg) && r == "core":
				t.Errorf("face %s may import core: faces call agentmem.Service", pkg)
			case isFace(pkg) && isFace(r) && r != "tools":
				t.Errorf("face %s may import face %s", pkg, r)
			case !isFace(pkg) && isFace(r) && !strings.HasPrefix(pkg, "cmd/") && !strings.HasPrefix(pkg, "examples/") && !strings.HasPrefix(pkg, "internal/"):
				t.Errorf("%s, below the faces, may import face %s", pkg, r)
			}
		}
	}
}
