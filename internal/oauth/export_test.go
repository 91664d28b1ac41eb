package oauth

// ScrubTokenError is scrubTokenError, for the tests of package oauth_test.
var ScrubTokenError = scrubTokenError
