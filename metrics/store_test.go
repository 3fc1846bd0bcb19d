package metrics_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"unicode"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/metrics"
	"github.com/prometheus/client_golang/prometheus"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// nilStore is a store whose every method panics (a nil agentmem.Store
// embedded), with the optional vector reads, which fail.
type nilStore struct{ agentmem.Store }

var errVectors = agentmem.Errorf(agentmem.EUNAVAILABLE, "no vectors")

func (nilStore) ScanVectors(context.Context, string, string, func(string, string, []byte) error) error {
	return errVectors
}

func (nilStore) CountVectors(context.Context, string, string) (int, error) { return 0, errVectors }

func (nilStore) ScanVectorsBySeq(context.Context, string, string, int64, bool, func(string, string, []byte) error) error {
	return errVectors
}

// snake is the op label of a method: its name in snake case, an initialism
// one word (FindUserIDs: find_user_ids).
func snake(name string) string {
	name = strings.ReplaceAll(strings.ReplaceAll(name, "IDs", "Ids"), "ID", "Id")
	var b strings.Builder
	for i, r := range name {
		if unicode.IsUpper(r) && i > 0 {
			b.WriteByte('_')
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

// newTracing returns a tracer provider whose spans end in the exporter
// returned, and a context within a span of it.
func newTracing(t *testing.T) (*sdktrace.TracerProvider, *tracetest.InMemoryExporter, context.Context) {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { tp.Shutdown(context.Background()) })
	ctx, _ := tp.Tracer("test").Start(context.Background(), "test")
	return tp, exp, ctx
}

// counts returns the samples of the histogram name in reg by their op
// label.
func counts(t *testing.T, reg *prometheus.Registry, name string) map[string]uint64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]uint64{}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "op" {
					out[l.GetValue()] += m.GetHistogram().GetSampleCount()
				}
			}
		}
	}
	return out
}

// TestStoreTimesEveryMethod calls every method of agentmem.Store through
// the decorator, and checks that each was timed under its own op and
// traced in a span of that name: a method that reaches the store without
// the decorator's own wrapping (one left to an embedded interface) fails.
func TestStoreTimesEveryMethod(t *testing.T) {
	reg := prometheus.NewRegistry()
	tp, exp, ctx := newTracing(t)
	s := metrics.Store(nilStore{}, reg, tp)
	v := reflect.ValueOf(s)
	st := reflect.TypeFor[agentmem.Store]()
	if st.NumMethod() < 80 {
		t.Fatalf("agentmem.Store has %d methods: the reflection reads another type", st.NumMethod())
	}
	ctxType := reflect.TypeFor[context.Context]()
	var methods []string
	for i := range st.NumMethod() {
		methods = append(methods, st.Method(i).Name)
	}
	methods = append(methods, "ScanVectors", "CountVectors", "ScanVectorsBySeq") // kept, as nilStore has them
	for _, name := range methods {
		m := v.MethodByName(name)
		if !m.IsValid() {
			t.Errorf("the decorator has no method %s", name)
			continue
		}
		args := make([]reflect.Value, m.Type().NumIn())
		for j := range args {
			if in := m.Type().In(j); in == ctxType {
				args[j] = reflect.ValueOf(ctx)
			} else {
				args[j] = reflect.Zero(in)
			}
		}
		func() {
			defer func() { recover() }() // nilStore's methods panic; the call is recorded first
			m.Call(args)
		}()
	}

	got := counts(t, reg, "agentmem_store_operation_duration_seconds")
	spans := map[string]int{}
	for _, sp := range exp.GetSpans() {
		spans[sp.Name]++
	}
	for _, name := range methods {
		op := snake(name)
		if got[op] != 1 {
			t.Errorf("%s: %d calls timed under op=%q, want 1", name, got[op], op)
		}
		if name == "Close" {
			continue // no context, no span
		}
		if spans["store."+op] != 1 {
			t.Errorf("%s: %d spans store.%s, want 1", name, spans["store."+op], op)
		}
	}
	if len(got) != len(methods) {
		t.Errorf("%d ops timed, want %d (one per method): %v", len(got), len(methods), got)
	}
	// The labels of the dashboards built on the decorator's first version.
	for _, op := range []string{"append_messages", "find_thread_by_id", "find_user_ids", "find_key_by_id", "delete_threads_before"} {
		if got[op] != 1 {
			t.Errorf("op %q: %d calls, want 1", op, got[op])
		}
	}
}

// TestStoreErrors checks that a failure is counted by op and code, and
// marks its span failed with the code.
func TestStoreErrors(t *testing.T) {
	reg := prometheus.NewRegistry()
	tp, exp, ctx := newTracing(t)
	s := metrics.Store(nilStore{}, reg, tp)
	err := s.(interface {
		ScanVectors(context.Context, string, string, func(string, string, []byte) error) error
	}).ScanVectors(ctx, "u", "space", nil)
	if !errors.Is(err, errVectors) {
		t.Fatalf("err=%v, want the store's", err)
	}
	families, _ := reg.Gather()
	var found bool
	for _, f := range families {
		if f.GetName() == "agentmem_store_operation_errors_total" {
			for _, m := range f.GetMetric() {
				labels := map[string]string{}
				for _, l := range m.GetLabel() {
					labels[l.GetName()] = l.GetValue()
				}
				found = found || labels["op"] == "scan_vectors" && labels["code"] == agentmem.EUNAVAILABLE && m.GetCounter().GetValue() == 1
			}
		}
	}
	if !found {
		t.Errorf("no agentmem_store_operation_errors_total{op=scan_vectors,code=%s} 1", agentmem.EUNAVAILABLE)
	}
	spans := exp.GetSpans()
	if len(spans) != 1 || spans[0].Status.Description != agentmem.EUNAVAILABLE {
		t.Errorf("spans=%+v, want one failed with code %s", spans, agentmem.EUNAVAILABLE)
	}
}

// scanOnly is a store that scans vectors but neither counts them nor reads
// them by write order (PostgreSQL).
type scanOnly struct{ agentmem.Store }

func (scanOnly) ScanVectors(context.Context, string, string, func(string, string, []byte) error) error {
	return nil
}

// TestStoreOptionalMethods checks that the decorator has the optional
// vector reads its store has, and only those: search asks for them by
// type assertion.
func TestStoreOptionalMethods(t *testing.T) {
	type scanner interface {
		ScanVectors(context.Context, string, string, func(string, string, []byte) error) error
	}
	type counter interface {
		CountVectors(context.Context, string, string) (int, error)
	}
	type bySeq interface {
		ScanVectorsBySeq(context.Context, string, string, int64, bool, func(string, string, []byte) error) error
	}
	reg := prometheus.NewRegistry()
	for _, c := range []struct {
		name                string
		store               agentmem.Store
		scan, count, halves bool
	}{
		{"none", struct{ agentmem.Store }{}, false, false, false},
		{"scan", scanOnly{}, true, false, false},
		{"all", nilStore{}, true, true, true},
	} {
		s := metrics.Store(c.store, reg, nil)
		_, scan := s.(scanner)
		_, count := s.(counter)
		_, halves := s.(bySeq)
		if scan != c.scan || count != c.count || halves != c.halves {
			t.Errorf("%s: ScanVectors %v, CountVectors %v, ScanVectorsBySeq %v; want %v, %v, %v", c.name, scan, count, halves, c.scan, c.count, c.halves)
		}
	}
}

// TestStoreUnchanged checks that a decorator recording nothing is none.
func TestStoreUnchanged(t *testing.T) {
	s := scanOnly{}
	if got := metrics.Store(s, nil, nil); got != agentmem.Store(s) {
		t.Errorf("Store(s, nil, nil) = %T, want s itself", got)
	}
}
