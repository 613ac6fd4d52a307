package main

import "errors"

var errNoModel = errors.New(`no model configured.

Zero talks to any OpenAI-compatible endpoint. Set:
  ZERO_MODEL=<model>           the chat model, for example gpt-4.1-mini
  OPENAI_API_KEY=<key>         your API key (for OpenAI, OpenRouter, ...)
  OPENAI_BASE_URL=<url>        only for another endpoint, for example
                               http://localhost:11434/v1 for Ollama (no key needed)
or pass --model and --base-url, or set models.chat in ~/.config/zero/config.yaml
(see zero config).`)

var errNoKey = errors.New(`OPENAI_API_KEY is not set.

The default endpoint is OpenAI's, which needs a key: set OPENAI_API_KEY, or set
OPENAI_BASE_URL (or --base-url) to a local OpenAI-compatible server such as
Ollama (http://localhost:11434/v1).`)
