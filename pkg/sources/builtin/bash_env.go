package builtin

// configure applies the per-tool settings of the builtins section: the
// shell's environment (builtins.bash.env) and the destinations webfetch
// may reach besides the public internet (builtins.webfetch.allowHosts).
func (t *toolset) configure(cfg Config) error {
	env, err := cfg.Bash.environ()
	if err != nil {
		return err
	}
	t.bashEnv = env
	allow, err := newAllowList(cfg.Webfetch.AllowHosts)
	if err != nil {
		return err
	}
	t.client = newFetchClient(allow)
	return nil
}
