package drift

// A server's launch (how it is started or reached: see docs/PINS.md) is
// pinned like a tool, under LaunchKey, its definition the canonical JSON
// the caller computes (config.Launch.Definition). [Diff] shows a launch
// change field by field, in launchOrder.

// LaunchKey is the key (a Pin's or a Drift's Tool) under which a
// server's approved launch is pinned. Tool names never hold control
// characters, so the key cannot be a tool's.
const LaunchKey = "\x1elaunch"

// LaunchBegun is the key of the one pin, of no server (""), that says
// that launches are pinned in this store: before it exists (a store made
// by a version that pinned no launches, or a new one), a server without a
// launch pin is pinned at its first start rather than held.
const LaunchBegun = "\x1elaunch-begun"

// launchOrder is the order in which Diff shows a launch's fields; any
// other key follows, sorted.
var launchOrder = []string{"transport", "command", "args", "package", "env", "cwd", "url", "headers"}
