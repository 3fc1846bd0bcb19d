package metrics_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/metrics"
)

// TestServiceTracesEveryMethod calls every method of agentmem.Service
// through the decorator and checks that each opened a span of its own
// name: a method that reaches the service without the decorator's own
// wrapping fails.
func TestServiceTracesEveryMethod(t *testing.T) {
	tp, exp, ctx := newTracing(t)
	svc := metrics.Service(struct{ agentmem.Service }{}, tp) // every method panics, once traced
	v := reflect.ValueOf(svc)
	st := reflect.TypeFor[agentmem.Service]()
	if st.NumMethod() < 50 {
		t.Fatalf("agentmem.Service has %d methods: the reflection reads another type", st.NumMethod())
	}
	ctxType := reflect.TypeFor[context.Context]()
	for i := range st.NumMethod() {
		m := v.MethodByName(st.Method(i).Name)
		args := make([]reflect.Value, m.Type().NumIn())
		for j := range args {
			if in := m.Type().In(j); in == ctxType {
				args[j] = reflect.ValueOf(ctx)
			} else {
				args[j] = reflect.Zero(in)
			}
		}
		func() {
			defer func() { recover() }()
			m.Call(args)
		}()
	}
	spans := map[string]int{}
	for _, s := range exp.GetSpans() {
		spans[s.Name]++
		if !s.Parent.IsValid() {
			t.Errorf("span %s is not under its caller's", s.Name)
		}
	}
	for i := range st.NumMethod() {
		name := "service." + snake(st.Method(i).Name)
		if spans[name] != 1 {
			t.Errorf("%s: %d spans %s, want 1", st.Method(i).Name, spans[name], name)
		}
	}
}
