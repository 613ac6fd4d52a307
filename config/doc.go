// Package config loads Zero's configuration and remembers where every value came from.
//
// # Sources
//
// Per key, highest first:
//
//  1. flags: [Sources.Flags], by dotted key, only those the user set;
//  2. the environment (below);
//  3. the project file, <workspace>/.zero/config.yaml ([ProjectFile]);
//  4. the user file, <userDir>/config.yaml ([UserFile]), where the caller passes userDir as
//     $XDG_CONFIG_HOME/zero, else ~/.config/zero;
//  5. the defaults ([Defaults]).
//
// A missing or empty file is fine. [Effective.Origin] tells for each dotted key which source
// won: "default", "user <path>:<line>", "project <path>:<line>", "env NAME" or "flag --name".
//
// # Environment variables
//
//	ZERO_MODEL          models.chat.model
//	OPENAI_BASE_URL     models.chat.base_url
//	ZERO_UTILITY_MODEL  models.utility.model
//	ZERO_TOOL_PROTOCOL  models.chat.tool_protocol
//	ZERO_PROFILE        profile
//	ZERO_SANDBOX        sandbox.backend
//	ZERO_SANDBOX_IMAGE  sandbox.image
//	ZERO_APPROVAL       approval
//
// An empty variable counts as unset. API keys are never part of the configuration: each model
// role names the variable that holds its key (api_key_env, default OPENAI_API_KEY), and
// [Effective.APIKey] reads it when a client is built, so no config file, printout or log line
// carries a key.
//
// # Flags
//
// Flags arrive by dotted key. Origins and errors name them as the command line does: --model
// (models.chat.model), --base-url (models.chat.base_url), --utility-model (models.utility.model),
// --tool-protocol (models.chat.tool_protocol), --profile, --sandbox (sandbox.backend) and
// --approval; any other key as --<dotted key>
// ([FlagName]).
//
// # Model roles
//
// Utility takes every field no source sets from chat (origin "same as models.chat.<field>
// (...)"), so configuring chat alone configures both. Embedding takes only base_url and
// api_key_env from chat; its model stays "" (no embedding model) until configured.
//
// # Per session
//
// A profile's agent.yaml may override models.<role> (model, base_url, api_key_env): one more
// layer above all these sources, for the agents of that profile, and the model a session chose
// in the editor is one more above it. [Effective.Endpoint] merges them into the role's final
// settings and says where each came from. A workspace chooses no key: an endpoint its
// config.yaml or one of its profiles chose gets none, and its profiles cannot name the variable
// a key is read from.
//
// # Files
//
// The file's keys are the yaml tags of [Config]:
//
//	models:
//	  chat:
//	    base_url: http://localhost:11434/v1   # "" = OpenAI
//	    model: qwen3:32b
//	    api_key_env: OPENAI_API_KEY           # the variable's NAME
//	    context_length: 0                     # 0 = what the endpoint says, else 128000
//	    max_output_tokens: 0                  # 0 = a quarter of the context, at most 8192; -1 = no cap
//	    tool_protocol: auto                   # auto | native | json
//	    vision: auto                          # auto | true | false: does the model see images
//	    rate_limit: {requests: 0, input_tokens: 0, output_tokens: 0}   # per minute, 0 = none
//	    price: {input: 3, output: 15, cached: 0.3}   # per million tokens; unset = cost unknown
//	  utility: {model: qwen3:8b}
//	  embedding: {model: nomic-embed-text}
//	profile: agent0
//	approval: sandbox          # sandbox (auto in docker, ask for host commands) | auto | ask
//	sandbox:
//	  backend: auto            # auto | docker | local
//	  image: kalilinux/kali-rolling
//	  network: bridge
//	  memory: 4g               # "" = no limit
//	  cpus: 2
//	  pids: 512
//	  user: ""
//	limits: {misformat: 3, repeat: 3, subordinate_depth: 5, critical_retries: 1,
//	         tokens: 0, cost: 0}   # a run's budget: total tokens, cost; 0 = none
//
// The files are read by the walker all of Zero's YAML settings share (package yamlwalk): a key
// set to null (nothing after it, ~, null or the !!null tag) counts as absent, while a quoted ""
// is a value. Anchors, aliases and << merge keys work.
//
// Deadlines (search.timeout, document_query.timeout, models.<role>.timeouts and the sandbox's
// timeouts and output_timeouts) are durations: a
// Go duration such as 20s or 1m30s, or, as before they were durations, a whole number of
// seconds; [Config] holds them as time.Duration and Print writes them as Go does (0, the
// default, as 0).
//
// # Errors
//
// Load checks everything and reports every problem at once, each an [*Error] (matching
// [ErrInvalid]) that names the file, line and dotted key:
//
//	/home/u/.config/zero/config.yaml:7: limits.repeat: must be a number, got "three"
//	/home/u/.config/zero/config.yaml:3: modles: unknown key (did you mean "models"?)
//	env ZERO_SANDBOX: sandbox.backend: must be one of "auto", "docker", "local", got "podman"
//
// Problems are: malformed YAML, a second YAML document, unknown or duplicate keys, a section
// given a value or a value given a section, a number that is not one, negative numbers (limits
// misformat and repeat must be at least 1), a bad enum value, a base_url that is not http(s), an
// api_key_env that is not a variable name (the message never repeats it, since it is most
// likely a pasted key), an empty image, network or profile, a profile that is a path, and a
// sandbox memory that is not a size such as 512m or 4g.
package config
