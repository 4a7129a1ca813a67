package robots

import (
	"context"
	"log/slog"
)

// warnings is the plugin's default log handler: warnings and errors go to
// slog's default handler (stderr unless the program set another), the rest
// nowhere, so that what needs the user's attention reaches them without
// configuration. WithLogger replaces it.
type warnings struct{ slog.Handler }

func (h warnings) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelWarn && h.Handler.Enabled(ctx, l)
}

func (h warnings) WithAttrs(as []slog.Attr) slog.Handler { return warnings{h.Handler.WithAttrs(as)} }
func (h warnings) WithGroup(name string) slog.Handler    { return warnings{h.Handler.WithGroup(name)} }
