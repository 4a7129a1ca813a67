package usage_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"

	"github.com/politecrawl/robots/dialect"
	"github.com/politecrawl/robots/policy"
	"github.com/politecrawl/robots/usage"
)

// Before the fetch, Check reads robots.txt and, for a declared purpose,
// the origin's tdmrep.json; after it, CheckResponse adds what the response
// states. Every signal comes with its carrier.
func ExampleCheck() {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			fmt.Fprint(w, "User-agent: *\nAllow: /\nContent-Usage: search=y\n")
		case "/.well-known/tdmrep.json":
			fmt.Fprint(w, `[{"location": "/books/", "tdm-reservation": 1}]`)
		}
	}))
	defer site.Close()
	r, _ := policy.NewResolver(policy.WithUserAgent("ExampleBot/1.0"))
	for _, path := range []string{"/books/1", "/news/1"} {
		u, _ := url.Parse(site.URL + path)
		rep, err := usage.Check(context.Background(), r, u, dialect.TrainAI)
		if err != nil {
			fmt.Println(err)
			continue
		}
		if s, refused := rep.Refusal([]dialect.Category{dialect.TrainAI}, dialect.UseUnknown, false); refused {
			fmt.Println(path, "not fetched:", s)
		} else {
			fmt.Println(path, "may be fetched:", rep.Usage)
		}
	}
	// Output:
	// /books/1 not fetched: train-ai=n: tdmrep.json rule 0 (location /books/): 1
	// /news/1 may be fetched: search=y
}

// After the fetch, the response's headers and meta elements join what was
// known before; each signal is a record to keep.
func ExampleCheckResponse() {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			fmt.Fprint(w, "User-agent: *\nAllow: /\nContent-Usage: search=y\n")
		}
	}))
	defer site.Close()
	r, _ := policy.NewResolver(policy.WithUserAgent("ExampleBot/1.0"))
	u, _ := url.Parse(site.URL + "/page")
	h := http.Header{"Content-Type": {"text/html"}, "Robots-Tag": {"examplebot;noai"}}
	body := []byte(`<html><head><meta name="tdm-reservation" content="1"></head><body>...`)
	rep, err := usage.CheckResponse(context.Background(), r, u, h, body, dialect.TrainAI, dialect.Search)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range rep.Signals {
		fmt.Println(s)
	}
	// Output:
	// search=y: robots.txt line 3: Content-Usage: search=y
	// train-ai=n: Robots-Tag header, for examplebot: noai
	// ai-input=n: Robots-Tag header, for examplebot: noai
	// train-ai=n: meta <meta name="tdm-reservation">: 1
	// ai-input=n: meta <meta name="tdm-reservation">: 1
}

// A declaration read: RSL's name for AI training is read as train-ai.
func ExampleConfig_Parse() {
	purposes, use, err := usage.Config{Purposes: []string{"ai-train", "search"}, Use: "reference"}.Parse()
	fmt.Println(purposes, use, err)
	_, _, err = usage.Config{Purposes: []string{"mining"}}.Parse()
	fmt.Println(err)
	// Output:
	// [train-ai search] reference <nil>
	// unknown purpose "mining" (known: train-ai, search, ai-input)
}

// An RSL licence that licenses training for education only: a crawler
// that declares no user is told so, one that declares education is
// licensed.
func ExampleWho_Check() {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			fmt.Fprint(w, "License: /license.xml\nUser-agent: *\nAllow: /\n")
		case "/license.xml":
			fmt.Fprint(w, `<rsl xmlns="https://rslstandard.org/rsl"><content url="/"><license>
  <permits type="usage">ai-train</permits><permits type="user">education</permits>
</license></content></rsl>`)
		}
	}))
	defer site.Close()
	r, _ := policy.NewResolver(policy.WithUserAgent("ExampleBot/1.0"))
	u, _ := url.Parse(site.URL + "/course/1")
	for _, who := range []usage.Who{{}, usage.Config{User: "education", Geo: "fr"}.Who()} {
		rep, err := who.Check(context.Background(), r, u, dialect.TrainAI)
		if err != nil {
			fmt.Println(err)
			continue
		}
		_, refused := rep.Refusal([]dialect.Category{dialect.TrainAI}, dialect.UseUnknown, false)
		fmt.Printf("%+v refused %v: %s\n", who, refused, rep.Signals[0].Value)
	}
	// Output:
	// {User: Geo:} refused true: not licensed: user not declared (permits education)
	// {User:education Geo:FR} refused false: licensed
}

// A page that links a Creative Commons licence: the link is recorded, not
// fetched, and decides nothing.
func ExampleWho_CheckResponse() {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			fmt.Fprint(w, "User-agent: *\nAllow: /\n")
		}
	}))
	defer site.Close()
	r, _ := policy.NewResolver(policy.WithUserAgent("ExampleBot/1.0"))
	u, _ := url.Parse(site.URL + "/photo")
	h := http.Header{"Link": {`<https://creativecommons.org/licenses/by/4.0/>; rel="license"`}}
	rep, err := usage.Who{User: "commercial"}.CheckResponse(context.Background(), r, u, h, nil, dialect.Search)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range rep.Signals {
		fmt.Println(s)
	}
	// Output:
	// search=unknown: license https://creativecommons.org/licenses/by/4.0/ (Link header): not an RSL licence (no type)
}
