//go:build bench && !agents

package cli

// benchSpawn needs the agents harness (the agent TUIs and their scripted model): built without
// the agents tag, the spawn rows are left out. `make bench` builds with -tags 'bench agents'.
func (b *bxBench) benchSpawn() {
	b.t.Logf("spawn rows skipped: build with -tags 'bench agents'")
}
