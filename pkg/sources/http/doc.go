// Package http turns declared HTTP endpoints (the `http` config section) and
// the operations of OpenAPI 3.0/3.1 specs (the `openapi` section) into
// tools with source label "http", published together into the one
// registry layer of kind http.
//
// # Declaring a tool
//
//	"http": [{
//	  "name": "get_post",
//	  "description": "Fetch a blog post",
//	  "method": "GET",
//	  "url": "https://api.example.test/posts/{id}",
//	  "headers": {"Authorization": "Bearer ${API_TOKEN}"},
//	  "resultMode": "json"
//	}]
//
// Keys: name (letters, digits, _ and -), description, method (GET, POST,
// PUT, PATCH, DELETE, HEAD, OPTIONS; default GET), url (absolute, with
// {placeholder}s), headers (`${VAR}` expanded from the environment when
// the source starts), query (argument names), body (json | form | raw;
// default json), inputSchema, timeout (ms, default 30000) and resultMode
// (text | json | status+text; default text).
//
// # How a call's arguments become a request
//
//   - Each {placeholder} takes the argument of that name, path-escaped, and
//     consumes it. A missing or null one is an invalid-arguments failure.
//   - GET and HEAD send every other argument in the query string. Other
//     methods send only the arguments listed in `query` there.
//   - What remains is the body. json: one object of the remaining
//     arguments, their values exactly as the model wrote them. form: the
//     same, URL-encoded. raw: the argument named `body` is the whole body —
//     a string as is, any other value as its JSON text — and other
//     remaining arguments are not sent; the Content-Type is the configured
//     one, else text/plain; charset=utf-8. With nothing remaining no body
//     and no Content-Type are sent (not "{}").
//   - In a URL, query string or form a string is sent as is, a number or
//     boolean as its JSON text, an array as the key repeated once per
//     element, an object as its JSON text; null is left out.
//
// When no inputSchema is given one is derived: every placeholder a required
// string, every `query` name an optional string, and for raw bodies an
// optional string `body`; further properties stay allowed.
//
// # Results
//
// A 2xx answer is a success with metadata {"status": N}. Its output by
// resultMode: text, the body as is; json, the body compacted when it is
// valid JSON (a body that is not JSON passes through unchanged);
// status+text, "HTTP N\nBODY". Any other status is the failure
// "HTTP N: BODY" with metadata {"status": N}, whatever the resultMode.
// Bodies are capped at Env.OutputCap() bytes: the text is cut on a character
// boundary, the one truncation note "\n[output truncated: N bytes omitted]" (N the true
// count: the rest of the body is read and counted, not kept) is appended and metadata gets
// "truncated": true. Invalid UTF-8 becomes U+FFFD.
//
// The tool's timeout gives the failure "NAME: timed out after Nms" with
// outcome timeout; the caller's own deadline or cancellation gives
// tool.ContextResult. A network error is the failure
// "NAME: request failed: ERROR". Header values never appear in any of them.
//
// # OpenAPI import
//
//	"openapi": [{"spec": "./petstore.yaml", "baseUrl": "https://api.example.test/v1",
//	             "headers": {"X-Api-Key": "${PETS_KEY}"}, "prefix": "pets_",
//	             "operations": {"deletePet": false}, "timeout": 30000}]
//
// spec is a path (relative to the config's directory) or an http(s) URL,
// fetched with the headers; timeout bounds that fetch and each call. The parser is
// github.com/getkin/kin-openapi, which reads 3.0 and 3.1, JSON and YAML.
// A local spec may $ref files inside its own directory tree only; a remote
// one, documents on its own host only.
//
// Each operation is one tool named tool.Sanitize(prefix + operationId); an
// operation without an operationId is named from its method and path
// (GET /pets/{petId} → get_pets_petId). The operations filter map (the
// usual allowlist/drop-list rule) matches operationIds before the prefix;
// unknown names in it are logged as warnings. The description is the
// summary, then a blank line and the description when both exist.
//
// Requests go to baseUrl + path; without baseUrl, to the spec's first
// server (variables at their defaults, a relative URL resolved against the
// spec's URL). Path, query and header parameters become top-level
// properties with their schemas; cookie parameters are not sent. The
// request body prefers JSON (any +json type; sent with the spec's media
// type), then form, then any other media type (sent raw from a string
// `body`). A JSON or form body whose schema is a plain
// object, none of whose properties shares a parameter's name, is merged:
// its properties become top-level arguments (required ones required when
// the body is) and every argument that is not a parameter goes into the
// body object. Any other body is nested as one argument named `body`
// (`requestBody` if a parameter is called body). Schemas are inlined —
// every $ref replaced by its target, recursion cut with {} — so each tool's
// schema stands alone; OpenAPI 3.0 `nullable` becomes a "null" type.
//
// # Failures at start
//
// A declared tool whose header names an unset ${VAR}, or a spec that cannot
// be loaded, is left out, and the source reports Failed with every reason
// (naming the tool or spec and the variable, never a value), while all the
// tools that could be built are published. Start returns an error only when
// nothing could be published. A declared tool keeps its name against an
// OpenAPI operation of the same name; the operation is left out with a
// warning.
package http
