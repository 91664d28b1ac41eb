package policy

// Trust is how far Switchboard believes what an upstream server says about
// its own tools. It is configured per server by the operator.
type Trust string

const (
	// Trusted servers' annotations are taken at their word.
	Trusted Trust = "trusted"
	// Untrusted servers' annotations may only make Switchboard more careful.
	Untrusted Trust = "untrusted"
	// Sandboxed servers run confined, but the sandbox limits what they can
	// reach, not what a tool does with what it was given (a mounted
	// workspace, an API token), so their annotations are no more credible
	// than an untrusted server's.
	Sandboxed Trust = "sandboxed"
)

// Annotations are a tool's MCP annotations as the server declared them; a
// nil pointer means "not declared". The MCP defaults (schema 2025-06-18,
// ToolAnnotations) are readOnlyHint false, destructiveHint true,
// idempotentHint false and openWorldHint true. A caller holding go-sdk's
// ToolAnnotations, whose ReadOnlyHint is a plain bool, may map false to nil:
// false is the default, so nothing is lost.
//
// Only ReadOnly and Destructive affect decisions today; Idempotent and
// OpenWorld are carried so that callers keep one type for all four hints.
type Annotations struct {
	ReadOnly    *bool
	Destructive *bool
	Idempotent  *bool
	OpenWorld   *bool
}

// Effective returns the hints Switchboard acts on for a tool with the
// declared annotations a (nil means none declared) on a server of trust t.
//
//	trust                  declared readOnly   declared destructive   readOnly  destructive
//	trusted                true                any                    true      false
//	trusted                false or absent     false                  false     false
//	trusted                false or absent     true or absent         false     true
//	untrusted, sandboxed,  any                 any                    false     true
//	or any other value
//
// For a trusted server these are the declared values with the MCP defaults,
// except that readOnly wins: the spec says destructiveHint "is meaningful
// only when readOnlyHint == false", and a tool that does not modify its
// environment cannot destroy anything in it.
//
// For any other server an annotation may only tighten, never relax.
// readOnlyHint:true would relax (it would let a tool skip confirmation), so
// it is ignored. destructiveHint:false would relax, so it is ignored.
// destructiveHint:true tightens and counts, but it is also the default, so
// the outcome is the same either way: such a server's tools are always
// treated as possibly destructive. An unknown or empty Trust fails closed,
// as untrusted.
func Effective(a *Annotations, t Trust) (readOnly, destructive bool) {
	if t != Trusted {
		return false, true
	}
	if a == nil {
		return false, true
	}
	if a.ReadOnly != nil && *a.ReadOnly {
		return true, false
	}
	return false, a.Destructive == nil || *a.Destructive
}
