package fault

import "errors"

// Mask returns err with mask applied to its text, for an error that may
// quote what must not be shown (a server's secrets echoed in its
// output). The *Error and *Private wrappers along the chain are kept, with
// their causes masked, so errors.Is, CodeOf and IsPrivate read the same;
// below them, a cause whose text mask changes is replaced by one that
// reads the masked text and still unwraps to the original (for errors.Is
// against sentinels), and errors.As finds an *Error or *Private under it
// masked too. nil stays nil.
func Mask(err error, mask func(string) string) error {
	switch e := err.(type) {
	case nil:
		return nil
	case *Error:
		m := *e
		m.Err = Mask(e.Err, mask)
		return &m
	case *Private:
		return &Private{Err: Mask(e.Err, mask)}
	}
	msg := err.Error()
	if masked := mask(msg); masked != msg {
		return &maskedError{msg: masked, err: err, mask: mask}
	}
	return err
}

// maskedError reads its masked text and unwraps to the error it masks.
type maskedError struct {
	msg  string
	err  error
	mask func(string) string
}

func (e *maskedError) Error() string { return e.msg }
func (e *maskedError) Unwrap() error { return e.err }

// As finds an *Error or *Private under e masked as e is: their text is
// what errors.As callers show.
func (e *maskedError) As(target any) bool {
	switch t := target.(type) {
	case **Error:
		var inner *Error
		if !errors.As(e.err, &inner) {
			return false
		}
		*t = Mask(inner, e.mask).(*Error)
		return true
	case **Private:
		var inner *Private
		if !errors.As(e.err, &inner) {
			return false
		}
		*t = Mask(inner, e.mask).(*Private)
		return true
	}
	return false
}
