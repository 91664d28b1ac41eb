package testkit

import (
	"flag"
	"runtime"
	"strconv"
)

// WaitingParallel sets -test.parallel to four parallel tests per CPU
// unless the command line sets it (go test's default is one per CPU). For
// a TestMain, before m.Run, in packages whose tests spend their time
// waiting for the processes and connections they start, not computing;
// the tests that run in parallel there bound no time.
func WaitingParallel() {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		flag.Set("test.parallel", strconv.Itoa(4*runtime.GOMAXPROCS(0)))
	}
}
