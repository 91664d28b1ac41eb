package config

// CodeMode configures code mode ("context.codeMode"): the built-in tool
// code_run, which runs a model's short JavaScript program that calls the
// tools of its caller's view. Its zero value is the default: off. A zero
// limit means the sandbox's default (docs/CODEMODE.md).
type CodeMode struct {
	// Enabled offers code_run ("enabled"); off by default.
	Enabled bool
	// MemoryMB caps a run's memory ("memoryMB", 1 to 1024; default 32).
	MemoryMB int
	// CPUMs caps the JavaScript time of a run ("cpuMs", 10 to 600000;
	// default 2000).
	CPUMs int
	// WallMs caps a run, tool calls included ("wallMs", 100 to 3600000;
	// default 60000).
	WallMs int
	// Calls caps the tool calls of a run ("calls", 1 to 10000; default
	// 100).
	Calls int
	// OutputBytes caps a run's returned value as JSON ("outputBytes", 256
	// to 16777216; default 65536).
	OutputBytes int
	// Concurrent caps the runs in progress at once in the host
	// ("concurrent", 1 to 256; default 4); more wait, within their wall
	// time.
	Concurrent int
}

// codeModeFields are the JSON keys of "codeMode".
var codeModeFields = []string{"enabled", "memoryMB", "cpuMs", "wallMs", "calls", "outputBytes", "concurrent"}

// decodeCodeMode decodes "context.codeMode".
func (d *decoder) decodeCodeMode(n *node, p *jsonPath) CodeMode {
	var c CodeMode
	if n.kind != kindObject {
		d.wrongType(n, p, "", "object")
		return c
	}
	for _, m := range n.members {
		fp := p.k(m.key)
		switch m.key {
		case "enabled":
			c.Enabled, _ = d.boolean(m.val, fp, "")
		case "memoryMB":
			c.MemoryMB, _ = d.integer(m.val, fp, "", 1, 1024)
		case "cpuMs":
			c.CPUMs, _ = d.integer(m.val, fp, "", 10, 600000)
		case "wallMs":
			c.WallMs, _ = d.integer(m.val, fp, "", 100, 3600000)
		case "calls":
			c.Calls, _ = d.integer(m.val, fp, "", 1, 10000)
		case "outputBytes":
			c.OutputBytes, _ = d.integer(m.val, fp, "", 256, 16<<20)
		case "concurrent":
			c.Concurrent, _ = d.integer(m.val, fp, "", 1, 256)
		default:
			d.unknown(fp, m.key, codeModeFields, nil, "")
		}
	}
	return c
}
