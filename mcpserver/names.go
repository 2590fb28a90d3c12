package mcpserver

// ToolNames returns the names of the server's tools, in the order clients list them: for the
// documentation, which a test keeps equal to this list.
func ToolNames() []string {
	var names []string
	for _, t := range (&server{}).tools() {
		names = append(names, t.def.Name)
	}
	return names
}
