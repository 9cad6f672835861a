package search

// ServerInfo is what a source says about itself: for an MCP server, its
// mcpServers.NAME.title and description from the config, else the title
// and description of the serverInfo it announced; Name is its serverInfo
// name. Its words are a field of every tool the source serves, so a tool
// is found by the product name people say even when the server is
// configured under a short key.
type ServerInfo struct {
	Name, Title, Description string
}
