//go:build unix

package testport

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

func TestFreeNeverHandsOutAPortTwice(t *testing.T) {
	seen := map[int]bool{}
	for range 50 {
		p, err := Free()
		if err != nil {
			t.Fatal(err)
		}
		if seen[p] {
			t.Fatalf("port %d handed out twice", p)
		}
		seen[p] = true
	}
}

// TestAnotherProcessHoldsAPortUntilItExits starts this test binary again
// as a holder of a reservation, and tries the same reservation here: taken
// while the holder lives, free once it has been killed.
func TestAnotherProcessHoldsAPortUntilItExits(t *testing.T) {
	path := filepath.Join(t.TempDir(), "12345")
	if h := os.Getenv("TESTPORT_HOLD"); h != "" {
		if err := reserve(h); err != nil {
			os.Exit(3)
		}
		os.Stdout.WriteString("held\n")
		select {} // until killed
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestAnotherProcessHoldsAPortUntilItExits$")
	cmd.Env = append(os.Environ(), "TESTPORT_HOLD="+path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || line != "held\n" {
		t.Fatalf("the holder said %q, %v", line, err)
	}
	if err := reserve(path); err != errTaken {
		t.Fatalf("reserve while another process holds it: %v, want errTaken", err)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if err := reserve(path); err != nil {
		t.Fatalf("reserve once the holder is gone: %v", err)
	}
	if err := reserve(path); err != errTaken {
		t.Fatalf("reserve of a path this process holds: %v, want errTaken", err)
	}
}
