package acp

import "log/slog"

type slogLogger = slog.Logger

var slogDiscard = slog.New(slog.DiscardHandler)
