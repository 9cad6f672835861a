package builtin

// The tools' descriptions and input schemas are part of the public contract
// (models are prompted with them; the tests pin them byte for byte). Every
// object, nested ones included, forbids additional properties so that a
// model's misspelt argument is refused rather than silently ignored.

const bashDescription = "Run a shell command in the workspace and return its combined stdout and stderr. " +
	"The command runs with bash (or /bin/sh when bash is not installed) in its own process group; " +
	"on timeout the whole group is killed, and background jobs do not outlive the call."

var bashSchema = []byte(`{"type":"object","properties":{` +
	`"command":{"type":"string","description":"The shell command to run"},` +
	`"workdir":{"type":"string","description":"Directory to run in, relative to the workspace root (default: the root)"},` +
	`"timeout":{"type":"integer","minimum":1,"description":"Timeout in milliseconds (default 60000)"},` +
	`"description":{"type":"string","description":"A short description of what the command does, in 5-10 words"}` +
	`},"required":["command"],"additionalProperties":false}`)

const readDescription = "Read a text file in the workspace. With offset and/or limit, return only that window of lines, joined by newlines."

var readSchema = []byte(`{"type":"object","properties":{` +
	`"path":{"type":"string","description":"The file to read, relative to the workspace root"},` +
	`"offset":{"type":"integer","minimum":1,"description":"The first line to return, 1-based"},` +
	`"limit":{"type":"integer","minimum":1,"description":"How many lines to return"}` +
	`},"required":["path"],"additionalProperties":false}`)

const writeDescription = "Create or overwrite a file in the workspace with the given content; missing parent directories are created."

var writeSchema = []byte(`{"type":"object","properties":{` +
	`"path":{"type":"string","description":"The file to write, relative to the workspace root"},` +
	`"content":{"type":"string","description":"The complete new content of the file"}` +
	`},"required":["path","content"],"additionalProperties":false}`)

const editDescription = "Replace an exact string in a file. oldString must occur exactly once unless replaceAll is true."

var editSchema = []byte(`{"type":"object","properties":{` +
	`"path":{"type":"string","description":"The file to edit, relative to the workspace root"},` +
	`"oldString":{"type":"string","description":"The exact text to replace"},` +
	`"newString":{"type":"string","description":"The text to replace it with"},` +
	`"replaceAll":{"type":"boolean","description":"Replace every occurrence (default false)"}` +
	`},"required":["path","oldString","newString"],"additionalProperties":false}`)

const grepDescription = "Search file contents with an RE2 regular expression. Returns matching lines as FILE:LINE:TEXT, " +
	"FILE relative to the workspace root, in lexical file order; .git and node_modules are skipped."

var grepSchema = []byte(`{"type":"object","properties":{` +
	`"pattern":{"type":"string","description":"The RE2 regular expression to search for"},` +
	`"path":{"type":"string","description":"The directory (or file) to search, relative to the workspace root (default: the root)"},` +
	`"include":{"type":"string","description":"Only search files matching this glob, e.g. *.go or src/**/*.{ts,tsx}"},` +
	`"limit":{"type":"integer","minimum":1,"description":"The most matching lines to return (default 100)"}` +
	`},"required":["pattern"],"additionalProperties":false}`)

const globDescription = "Find files by glob pattern: ** matches any number of directories, * and ? match within one path segment; " +
	"a pattern without / matches file base names anywhere. Returns sorted paths relative to the workspace root."

var globSchema = []byte(`{"type":"object","properties":{` +
	`"pattern":{"type":"string","description":"The glob pattern, e.g. **/*.go or *.md"},` +
	`"path":{"type":"string","description":"The directory to search, relative to the workspace root (default: the root)"},` +
	`"limit":{"type":"integer","minimum":1,"description":"The most paths to return (default 100)"}` +
	`},"required":["pattern"],"additionalProperties":false}`)

const webfetchDescription = "Fetch a URL with GET and return its content as markdown (default), plain text or raw HTML."

var webfetchSchema = []byte(`{"type":"object","properties":{` +
	`"url":{"type":"string","description":"The http:// or https:// URL to fetch"},` +
	`"format":{"type":"string","enum":["text","markdown","html"],"description":"The form of the returned content (default markdown)"},` +
	`"timeout":{"type":"number","exclusiveMinimum":0,"maximum":120,"description":"Timeout in seconds (default 30, at most 120)"}` +
	`},"required":["url"],"additionalProperties":false}`)

const questionDescription = "Ask the user one or more questions and wait for the answers. " +
	"Use it when you need a decision or information only the user has."

var questionSchema = []byte(`{"type":"object","properties":{` +
	`"questions":{"type":"array","minItems":1,"description":"The questions to ask","items":{"type":"object","properties":{` +
	`"question":{"type":"string","description":"The question to ask"},` +
	`"header":{"type":"string","description":"A short label for the question"},` +
	`"options":{"type":"array","items":{"type":"string"},"description":"Answers to choose from"},` +
	`"multiple":{"type":"boolean","description":"Whether more than one option may be chosen"}` +
	`},"required":["question"],"additionalProperties":false}}` +
	`},"required":["questions"],"additionalProperties":false}`)

const applyPatchDescription = "Apply a patch that adds, updates and deletes files in the workspace, all or nothing. Format:\n" +
	"*** Begin Patch\n" +
	"*** Add File: path/new.txt\n" +
	"+line of the new file\n" +
	"*** Update File: path/old.txt\n" +
	"@@\n" +
	" context line\n" +
	"-removed line\n" +
	"+added line\n" +
	"*** Delete File: path/gone.txt\n" +
	"*** End Patch"

var applyPatchSchema = []byte(`{"type":"object","properties":{` +
	`"patchText":{"type":"string","description":"The full patch text, from *** Begin Patch to *** End Patch"}` +
	`},"required":["patchText"],"additionalProperties":false}`)

const todowriteDescription = "Write the current todo list and get it back as a checklist. The list is not stored: send the whole list each time."

var todowriteSchema = []byte(`{"type":"object","properties":{` +
	`"todos":{"type":"array","description":"The complete todo list","items":{"type":"object","properties":{` +
	`"id":{"type":"string","description":"A stable identifier for the item"},` +
	`"text":{"type":"string","description":"What to do"},` +
	`"completed":{"type":"boolean","description":"Whether it is done"}` +
	`},"required":["text"],"additionalProperties":false}}` +
	`},"required":["todos"],"additionalProperties":false}`)
