// Package profiles holds agent profiles and renders their prompt files: the built-in default set
// embedded in the binary, overridden file by file by the prompt folders of a profile, with Agent
// Zero's file names, lookup order and template syntax, so an Agent Zero profile folder works
// unchanged.
//
// # Profiles
//
// A profile is a folder in Agent Zero's layout: agent.yaml ([Spec]: title, description, context
// — when to use it — plus Zero's model overrides per role, tool filter, sandbox user and the
// sandbox backend it is written for, if one) and
// prompts/*.md overriding prompt files by name. A [Loader] finds a profile's folders in three
// profile layers and its prompts in six layers, highest priority first:
//
//	project+profile   <workspace>/.zero/agents/<name>/   agent.yaml and prompts/
//	project           <workspace>/.zero/prompts/         prompts only, for every profile
//	user+profile      <userDir>/agents/<name>/           agent.yaml and prompts/
//	user              <userDir>/prompts/                 prompts only, for every profile
//	built-in profile  embedded agents/<name>/            agent.yaml and prompts/
//	built-in          embedded default prompts           prompts only
//
// A profile exists if any profile layer has a folder for it. Its agent.yaml files are merged
// from the lowest layer up, each replacing the keys it sets (see [Profile.Spec]); unknown keys
// and wrong types are [ErrInvalidSpec] errors naming the file, the line and the key. agent.yaml
// is read by the walker config.yaml is read by (package yamlwalk): a key set to null (nothing
// after it, ~, null or the !!null tag) is left unset, anchors and << merge keys work, and a
// duplicate key is an error. The
// built-in profiles are agent0 (the top agent, which talks to the user and delegates),
// default (the base prompts unchanged), developer, researcher and hacker (security work in a
// Kali Linux container).
//
// What Agent Zero runs as Python cannot run here. A variables plugin (a *.py beside a prompt),
// Python tools and extensions, and an agent.json without agent.yaml are reported as
// [Diagnostic] values naming the file; the vars Agent Zero's plugins supplied (workdir_path,
// agent_profiles, date_time and the rest of [NativeVars]) are passed by the engine natively.
//
// # Lookup
//
// [New] takes prompt directories highest priority first; [DefaultFS] is always searched last.
// The first directory holding a file name wins. Names may contain slashes ("sub/x.md"), looked up
// relative to each directory. [Loader.Load] builds a [Prompts] over the existing layer folders
// of a profile.
//
// # Template syntax
//
//   - {{name}} (spaces inside the braces allowed) is replaced by vars["name"]. Strings are written
//     as they are; integers and floats in their shortest form (3, 1.5); bools as true/false; nil
//     as nothing; fmt.Stringer and error values by their String/Error text; lists, maps and
//     structs as compact JSON. A placeholder whose var is not passed stays in the output as
//     written, as in Agent Zero.
//   - {{if expr}} … {{elif expr}} … {{else}} … {{endif}}, nested freely. An expression combines
//     var names, string ('…' or "…"), number and True/False/None (or true/false/null) literals
//     with ==, !=, <, >, <=, >=, in, not in, and, or, not, unary minus and parentheses, with
//     Python's precedence, chained comparisons and truthiness (0, "", empty lists and maps, nil
//     and false are false). A name not among the vars is None. Ordering values of different
//     kinds is an error ([ErrEval]); comparing them for equality is false. No function calls,
//     attribute access or arithmetic: the evaluator is a small parser, never an eval. A block
//     tag alone on its line removes the whole line, so conditional sections leave no blank lines.
//   - {{ include "file.md" }} (or single quotes) renders another file, looked up through the
//     same directory list from the top, with the same vars. Includes nest; a chain that comes
//     back to a file already being rendered fails with [ErrIncludeCycle]; a missing file fails
//     with [ErrNotFound], naming the missing file and the including file and line.
//   - {{ include original }} renders the file of the same name from the next lower-priority
//     directory than the one the current file came from, so an override can extend the default
//     instead of copying it; overrides at several levels chain. With no lower file it renders
//     nothing, as in Agent Zero.
//   - A file that is, apart from surrounding whitespace, one ```json or ~~~json fenced block is a
//     JSON template (Agent Zero's fw.* message files). Render returns the block's content without
//     the fence. A placeholder where a JSON value belongs is written as JSON (strings quoted and
//     escaped, maps and lists encoded, a var not passed as null); a placeholder inside a JSON
//     string is written escaped without quotes (a var not passed as nothing). The output is
//     checked with encoding/json and an invalid result is an [ErrSyntax] error.
//   - Anything else in double braces ({{#each}}, a stray "{{") is plain text.
//
// Differences from Agent Zero's helpers/files.py: {{else}} and {{elif}} exist; a var's value is
// never scanned for tags, so a message containing {{ include "…" }} stays text; named includes
// inside an "original" file are searched through the whole list, so a profile's other overrides
// still apply there; a missing include, an unterminated {{if}} and an invalid condition are
// errors instead of text left in the prompt; a condition naming an unknown var treats it as None
// instead of leaving the block unprocessed; a placeholder inside a JSON string stays valid JSON.
// A same-named *.py VariablesPlugin next to a prompt is Python code that cannot run here: it is
// ignored ([Loader.Load] reports it as a [Diagnostic]), and its vars must be passed by the caller.
//
// # The default prompt set
//
// The engine passes these vars to every render: agent_name ("A0", "A1", …), agent_number (int),
// profile (the profile's name), workdir_path (the workspace's absolute path), sandbox ("local"
// or "docker"), os ("linux", …), date_time and agent_profiles (the profiles a subordinate may
// use, one "- name: context" line each, as [FormatProfileList] writes them). Some are passed
// only when known, so prompts test them with {{if}}: sandbox_isolation ("bubblewrap" or "none",
// local backend), sandbox_image and sandbox_user (Docker backend), default_line_count (the
// text_editor tool's). Files and the further vars they use:
//
// System prompt:
//   - agent.system.main.md: the manual; includes in order agent.system.main.role.md (agent_name,
//     agent_number), agent.system.main.environment.md (sandbox, os, workdir_path),
//     agent.system.main.communication.md (the JSON reply format, with an example; it includes
//     agent.system.main.communication_additions.md, the "closing brace ends the turn" rules, as
//     Agent Zero's does, so profiles replacing it keep them) or, when tool_protocol is "native"
//     (the model calls tools as the API's functions), agent.system.main.communication_native.md
//     (how to call them, and that a reply without a call is the answer), agent.system.main.solving.md,
//     agent.system.main.tips.md (workdir_path) and agent.system.main.specifics.md (empty here;
//     profiles override it).
//   - agent.system.tools.md (tools: the rendered tool prompts, concatenated); left out with native
//     tool calls, where each tool's prompt, without its JSON examples, is its function's description.
//   - agent.system.tool.response.md (workdir_path; includes agent.system.response_tool_tips.md),
//     agent.system.tool.code_exe.md, agent.system.tool.input.md,
//     agent.system.tool.text_editor.md and agent.system.tool.call_sub.md (workdir_path,
//     agent_profiles; the list is left out when agent_profiles is empty or not passed): one per
//     tool, collected with Names("agent.system.tool.*.md").
//   - agent.system.response_tool_tips.md, agent.system.main.communication_additions.md: no vars;
//     Agent Zero profiles include them.
//   - agent.system.datetime.md (date_time).
//   - agent.system.secrets.md (secrets: the names of the agent's secrets with their comments, as
//     secrets.Set.Prompt writes them; vars: Agent Zero's plain variables, always empty in Zero):
//     added only when there are secrets.
//   - agent.system.tool.todo.md (Zero's own): todo:write, the agent's plan that every face shows.
//   - agent.system.plan_mode.md (no vars, Zero's own): while plan mode is on, that only tools that
//     change nothing may run and that the answer is the plan.
//   - agent.system.projects.active.md (project_path, project_name, project_description,
//     project_instructions: Agent Zero's names): the workspace's AGENTS.md (or CLAUDE.md, or
//     GEMINI.md), the user's own and an Agent Zero project's instructions, each under a heading
//     naming its file (see package instructions); added only when there are any.
//
// Messages built by the engine:
//   - fw.user_message.md (message): JSON {"user": message}.
//   - fw.intervention.md (message): JSON {"system_message": …, "user_intervention": message}.
//   - fw.warning.md (message): JSON {"system_warning": message}.
//   - fw.msg_misformat.md, fw.msg_repeat.md, fw.msg_timeout.md: no vars.
//   - fw.msg_critical_error.md (error_message).
//   - fw.tool_not_found.md (tool_name, tools: the available tool names, tools_prompt: the whole
//     tools section, as Agent Zero passes it).
//   - fw.user_message.md and fw.intervention.md also get system_message and attachments (empty
//     lists), as Agent Zero's hist_add_user_message passes them.
//   - agent.context.extras.md (extras): "[EXTRAS]" then the extras.
//
// History compression (Agent Zero's, unchanged):
//   - fw.topic_summary.sys.md (no vars) and fw.topic_summary.msg.md (content: the messages as
//     "user: …"/"ai: …" lines): the utility model's instructions and request for every summary.
//   - fw.msg_summary.md (summary): JSON {"messages_summary": summary}, the message that stands for
//     the summarised middle of a topic.
//   - fw.msg_truncated.md (length): the marker left where a large message was cut.
//
// Memory (Agent Zero's memory plugin prompts, unchanged, and one of Zero's; see package memory):
//   - agent.system.tool.memory.md: the one prompt of memory_save, memory_load, memory_delete and
//     memory_forget.
//   - agent.system.memories.md (memories), agent.system.solutions.md (solutions): the recalled
//     memories and solutions, put into the extras.
//   - fw.memory_saved.md (memory_id), fw.memories_not_found.md (query), fw.memories_deleted.md
//     (memory_count): the memory tools' results.
//   - memory.memories_query.sys.md and memory.memories_query.msg.md (message, history): the
//     utility model writes the recall query; memory.memories_sum.sys.md and
//     memory.solutions_sum.sys.md: it extracts what to memorize at the end of a monologue;
//     memory.memorize.sys.md (Zero's own): both at once, one utility call answering
//     {"fragments": [...], "solutions": [...]}, used while a profile keeps Agent Zero's two;
//     memory.consolidation.sys.md and memory.consolidation.msg.md (area, current_timestamp,
//     new_memory, new_memory_metadata, similar_memories): it merges a new memory with similar ones.
//   - memory.solutions_query.sys.md (history), memory.keyword_extraction.sys.md,
//     memory.keyword_extraction.msg.md (memory_content), memory.memories_filter.sys.md,
//     memory.memories_filter.msg.md (memories, history, message), memory.recall_delay_msg.md:
//     Agent Zero's, kept for profiles that include or override them; Zero does not send them.
//
// Behaviour (Agent Zero's, unchanged; see package memory):
//   - agent.system.behaviour.md (rules): the rules first in the system prompt;
//     agent.system.behaviour_default.md: the rules when none were set.
//   - agent.system.tool.behaviour.md: the behaviour_adjustment prompt; behaviour.updated.md: its
//     result.
//   - behaviour.merge.sys.md and behaviour.merge.msg.md (current_rules, adjustments): the utility
//     model merges an adjustment into the rules; behaviour.search.sys.md: Agent Zero's, unused.
//
// Skills (see package skills):
//   - agent.system.tool.skills.md: the skills_tool prompt.
//   - agent.system.skills.md (skills): the skills' names and descriptions in the system prompt;
//     agent.system.skills.loaded.md (skills): the loaded skills' text in the extras.
//
// Documents and search (Agent Zero's, unchanged, misspelling included):
//   - agent.system.tool.document_query.md, agent.system.tool.search_engine.md: the tools' prompts
//     (search_engine only when search.url is set).
//   - fw.document_query.optmimize_query.md, fw.document_query.system_prompt.md: document_query's
//     utility-model prompts.
//
// Images (Agent Zero's, its first line, a heading over the vision tools, left out):
//   - agent.system.tool.vision_load.md: the vision_load prompt (images the model looks at).
//
// MCP servers' tools:
//   - agent.system.mcp_tools.md (tools): the tools of the MCP servers, with their input schemas.
//   - agent.system.tool.mcp_resources.md: Zero's mcp_resources tool (the servers' resources and
//     prompts), offered when there are MCP servers.
//
// Notes from code_execution_tool and input:
//   - fw.code.info.md (info): wraps a note as "[SYSTEM: info]".
//   - fw.code.no_output.md, fw.code.reset.md: no vars.
//   - fw.code.running.md (session): the shell is busy with an earlier command.
//   - fw.code.intervened.md (session): the user's message interrupted the wait; the command runs on.
//   - fw.code.not_started.md (reason): the user spoke or cancelled while the sandbox started (an
//     image pull): the command did not start, the start goes on.
//   - fw.code.pause_dialog.md, fw.code.no_out_time.md, fw.code.pause_time.md,
//     fw.code.max_time.md (timeout, in seconds).
//   - fw.code.runtime_wrong.md (runtime): JSON {"system_warning": …}.
//   - fw.code.exit_code.md (exit_code).
//
// # Prompt budget
//
// The system prompt (the behaviour rules, agent.system.main.md, then agent.system.tools.md holding
// every agent.system.tool.*.md an agent always has) of the default set and of every built-in
// profile stays under 3,450 tokens. It was 3,000, Agent Zero's budget for its core; the memory,
// behaviour and document_query prompts (Agent Zero's own, unchanged) add about 500, vision_load's
// (Agent Zero's tools_vision.md, which it too adds for a model that sees) about 150, and the
// core prompts were not cut further to make room. skills_tool and search_engine are left out:
// they are offered only when there are skills, or a search endpoint. The tests check it with the
// len/4 estimate and with the o200k_base tokenizer; a built-in prompt edit that breaks the budget
// fails the build.
package profiles
