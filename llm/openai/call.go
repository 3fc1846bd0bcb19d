package openai

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"syscall"
	"time"

	oai "github.com/openai/openai-go/v3"

	"github.com/agentmem/agentmem"
)

// call makes one logical request: it asks the breaker, then runs attempt
// until it succeeds, fails for good or runs out of retries. attempt gets a
// ctx bounded by Timeout and a place for the HTTP response, which it passes
// to the SDK as option.WithResponseInto so that the status and headers are
// known whatever the SDK made of the body. An *agentmem.Error returned by
// attempt (an answer that failed validation) is final and not retried.
//
// op names the model in messages: "Chat model" or "Embedding model".
func (c *Client) call(ctx context.Context, op string, b *breaker, attempt func(ctx context.Context, res **http.Response) error) error {
	ok, trial, wait := b.allow(c.Now())
	if !ok {
		if wait > 0 {
			return agentmem.Errorf(agentmem.EUNAVAILABLE, "%s unavailable: %d consecutive calls failed; not trying again for %s.", op, b.threshold, wait.Round(time.Second))
		}
		return agentmem.Errorf(agentmem.EUNAVAILABLE, "%s unavailable: %d consecutive calls failed; a trial call is under way.", op, b.threshold)
	}
	for n := 0; ; n++ {
		actx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
		var res *http.Response
		err := attempt(actx, &res)
		timedOut := errors.Is(actx.Err(), context.DeadlineExceeded)
		cancel()
		if err == nil {
			b.record(c.Now(), trial, success)
			return nil
		}
		if ctx.Err() != nil { // the caller gave up: no verdict on the server
			b.record(c.Now(), trial, neutral)
			return agentmem.Errorf(agentmem.EUNAVAILABLE, "%s call abandoned: %v.", op, ctx.Err())
		}
		o := c.classify(op, err, res, timedOut)
		delay, retry := c.retryDelay(o, n)
		if retry {
			if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < delay {
				retry = false // report the server's error, not our deadline
			}
		}
		if !retry {
			if o.retry && o.hasAfter && n < c.cfg.MaxRetries {
				o.err.Message += fmt.Sprintf(" It asked to be retried after %s.", o.retryAfter.Round(time.Second))
			}
			b.record(c.Now(), trial, o.result)
			return o.err
		}
		if err := c.Sleep(ctx, delay); err != nil {
			b.record(c.Now(), trial, neutral)
			return agentmem.Errorf(agentmem.EUNAVAILABLE, "%s call abandoned: %v.", op, err)
		}
	}
}

// outcome is what a failed attempt means.
type outcome struct {
	err        *agentmem.Error
	retry      bool
	retryAfter time.Duration // the server's requested wait, if hasAfter
	hasAfter   bool
	result     result // for the breaker if this is the last attempt
}

// classify maps a failed attempt to an outcome:
//
//	400, 413, 422               EINVALID, not retried, not a breaker failure (the server is up)
//	408, 409, 429, 5xx          EUNAVAILABLE, retried
//	other statuses (401, 404…)  EUNAVAILABLE, not retried
//	connection errors           EUNAVAILABLE, retried
//	attempt timed out           EUNAVAILABLE, not retried (see Config.Timeout)
//	2xx with a body that does not decode, or fails validation
//	                            EUNAVAILABLE, not retried: the server is broken,
//	                            not the caller's request, and tokens were spent
//
// x-should-retry: true or false overrides the status's choice.
func (c *Client) classify(op string, err error, res *http.Response, timedOut bool) outcome {
	var ae *agentmem.Error
	switch {
	case errors.As(err, &ae):
		r := failure
		if ae.Code != agentmem.EUNAVAILABLE {
			r = neutral
		}
		return outcome{err: ae, result: r}
	case timedOut:
		return outcome{err: agentmem.Errorf(agentmem.EUNAVAILABLE, "%s unavailable: no answer within %s.", op, c.cfg.Timeout), result: failure}
	case res != nil && res.StatusCode >= 400:
		return c.classifyStatus(op, err, res)
	case res != nil:
		return outcome{err: agentmem.Errorf(agentmem.EUNAVAILABLE, "%s unavailable: malformed answer (HTTP %d).", op, res.StatusCode), result: failure}
	}
	var permanent interface{ NonRetriable() } // the SDK's Azure transport refusing a URL
	var uerr *url.Error
	var nerr net.Error
	if errors.As(err, &permanent) || !(errors.As(err, &uerr) || errors.As(err, &nerr)) {
		return outcome{err: agentmem.Errorf(agentmem.EUNAVAILABLE, "%s unavailable: the request could not be sent.", op), result: failure}
	}
	what := "connection failed"
	var dns *net.DNSError
	switch {
	case errors.As(err, &dns):
		what = "host not found"
	case errors.Is(err, syscall.ECONNREFUSED):
		what = "connection refused"
	case errors.Is(err, syscall.ECONNRESET):
		what = "connection reset"
	}
	return outcome{err: agentmem.Errorf(agentmem.EUNAVAILABLE, "%s unavailable: %s.", op, what), retry: true, result: failure}
}

// errorCode matches the provider error codes safe to show: short
// machine tokens such as context_length_exceeded, never free text.
var errorCode = regexp.MustCompile(`^[a-z0-9_.]{1,64}$`)

func (c *Client) classifyStatus(op string, err error, res *http.Response) outcome {
	status := res.StatusCode
	o := outcome{result: failure}
	o.retry = status == http.StatusRequestTimeout || status == http.StatusConflict ||
		status == http.StatusTooManyRequests || status >= 500
	switch res.Header.Get("X-Should-Retry") {
	case "true":
		o.retry = true
	case "false":
		o.retry = false
	}
	o.retryAfter, o.hasAfter = retryAfter(res.Header, c.Now())

	detail := fmt.Sprintf("HTTP %d %s", status, http.StatusText(status))
	var apiErr *oai.Error
	if errors.As(err, &apiErr) && errorCode.MatchString(apiErr.Code) {
		detail += " (" + apiErr.Code + ")"
	}
	switch status {
	case http.StatusBadRequest, http.StatusRequestEntityTooLarge, http.StatusUnprocessableEntity:
		o.err = agentmem.Errorf(agentmem.EINVALID, "%s refused the request: %s.", op, detail)
		o.result = neutral
	case http.StatusUnauthorized, http.StatusForbidden:
		o.err = agentmem.Errorf(agentmem.EUNAVAILABLE, "%s unavailable: credentials refused, %s.", op, detail)
	default:
		o.err = agentmem.Errorf(agentmem.EUNAVAILABLE, "%s unavailable: %s.", op, detail)
	}
	return o
}

// retryDelay returns the wait before retry n+1 and whether to retry at all.
func (c *Client) retryDelay(o outcome, n int) (time.Duration, bool) {
	if !o.retry || n >= c.cfg.MaxRetries {
		return 0, false
	}
	if o.hasAfter {
		// Waiting less than the server asked is pointless; waiting more
		// than RetryMaxDelay stalls the caller, whose fallback is better.
		return o.retryAfter, o.retryAfter <= c.cfg.RetryMaxDelay
	}
	d := c.cfg.RetryMaxDelay
	if n < 30 && c.cfg.RetryBaseDelay<<n < d {
		d = c.cfg.RetryBaseDelay << n
	}
	return d/2 + rand.N(d/2+1), true // jitter spreads out clients that failed together
}

// retryAfter reads the server's requested wait: retry-after-ms, or
// Retry-After as seconds or as an HTTP date (relative to now).
func retryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 && ms < 1e12 {
			return time.Duration(ms * float64(time.Millisecond)), true
		}
	}
	v := h.Get("Retry-After")
	if v == "" {
		return 0, false
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s < 0 || s > 1e9 {
			return 0, false
		}
		return time.Duration(s * float64(time.Second)), true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
