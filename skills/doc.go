// Package skills reads Agent Zero's skills: folders holding a SKILL.md in the open Agent Skills
// format (YAML front matter with name and description, then Markdown instructions), plus any
// scripts and references beside it.
//
// [Discover] searches layered folders (workspace, profile, user: the first layer that defines a
// name wins) and returns a [Catalog]. The agent sees the skills' names and descriptions in its system
// prompt (the _13_skills_prompt extension), loads one with skills_tool:load, and from then on finds
// its full text in the prompt extras of every turn (_65_include_loaded_skills), up to [MaxLoaded]
// skills. See [Register].
//
// Zero never runs a skill's scripts itself: the agent runs them in its sandbox with
// code_execution_tool, like any other command.
//
// A skill folder may come from a cloned repository, so reading one is careful: symbolic links that
// leave a skill's folder are never followed (files are opened through an [os.Root]), SKILL.md must be
// a regular file of at most [MaxFileSize] bytes, and the search and the file lists are bounded.
// A broken skill is reported as a [Warning] and skipped; it never stops the others.
//
// The front matter is read by the walker config.yaml and a profile's agent.yaml are read by
// (package yamlwalk): null means the same (a key set to nothing, ~, null or !!null is absent),
// and a problem names the line of SKILL.md and the key ("malformed front matter: line 4: name:
// duplicate key (first set on line 3)").
package skills
