package cli

func (t *tree) complete() {}
