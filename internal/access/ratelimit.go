package access

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"

	"github.com/cuedeck/cuedeck/internal/tools"
	"github.com/cuedeck/cuedeck/pkg/core/resilience"
)

// RateLimit returns next behind limiter: each call counts against its
// tool and the client of the identity in its context (FromContext), and a
// call over the limit fails with seed 002's 429 "Rate Limit Exceeded",
// data retry_after_seconds, limit, window_seconds and current_count,
// without reaching next. Refusals are logged at warn with the tool and
// client. A nil limiter returns next unchanged.
func RateLimit(next tools.Caller, limiter *resilience.RateLimiter, log *slog.Logger) tools.Caller {
	return RateLimitNaming(next, limiter, "", log)
}

// RateLimitNaming is RateLimit whose 429 names setting: where the limits
// of this edge are changed (with %s for the tool).
func RateLimitNaming(next tools.Caller, limiter *resilience.RateLimiter, setting string, log *slog.Logger) tools.Caller {
	if limiter == nil {
		return next
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return tools.CallerFunc(func(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
		id := FromContext(ctx)
		if err := limiter.Allow(tool, id.Client); err != nil {
			var rl *resilience.RateLimitError
			if !errors.As(err, &rl) {
				return nil, err
			}
			log.Warn("rate limit exceeded", "tool", tool, "client", id.Client,
				"current_count", rl.CurrentCount, "limit", rl.Limit, "retry_after_seconds", rl.RetryAfterSeconds)
			data := map[string]any{
				"retry_after_seconds": rl.RetryAfterSeconds,
				"limit":               rl.Limit,
				"window_seconds":      rl.WindowSeconds,
				"current_count":       rl.CurrentCount,
			}
			if setting != "" {
				data["suggestion"] = "Retry after retry_after_seconds. " + strings.ReplaceAll(setting, "%s", tool)
			}
			return nil, &tools.Error{Code: tools.CodeRateLimit, Message: "Rate Limit Exceeded", Data: data}
		}
		return next.Call(ctx, tool, args)
	})
}
