package langchaingo_test

import (
	"context"
	"fmt"
	"log"

	"github.com/agentmem/agentmem/app"
	"github.com/agentmem/agentmem/client"
	"github.com/agentmem/agentmem/langchaingo"
	"github.com/tmc/langchaingo/chains"
	"github.com/tmc/langchaingo/llms/openai"
)

// A langchaingo conversation chain with agentmem as its memory: the one
// line is langchaingo.NewMemory. The chain's prompt then holds what
// agentmem remembers of the user, across conversations, within a budget.
func ExampleNewMemory() {
	ctx := context.Background()
	mem, err := app.Open(ctx, app.Config{DB: "sqlite:./agentmem.db"}) // or client.New("http://127.0.0.1:8080", nil)
	if err != nil {
		log.Fatal(err)
	}
	defer mem.Close()
	llm, err := openai.New() // OPENAI_API_KEY
	if err != nil {
		log.Fatal(err)
	}
	chain := chains.NewConversation(llm, langchaingo.NewMemory(mem.Service, "alice"))
	answer, err := chains.Run(ctx, chain, "What should I cook tonight?")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(answer)
}

// The same memory over a running agentmem server.
func ExampleNewMemory_server() {
	c := client.New("http://127.0.0.1:8080", nil)
	c.APIKey = "am_…"
	memory := langchaingo.NewMemory(c, "alice")
	memory.Context.BudgetTokens = 4000 // the context's budget; the server's default otherwise
	_ = memory
}
