package bus

import "testing"

// What the server logs of a failed write, and of a damaged block, as the
// embedded server's logger hears it.
func TestDamageLogReadsTheServersReports(t *testing.T) {
	d := &damageLog{found: map[string]string{}}
	for _, line := range []string{
		"JetStream failed to store a msg on stream '$G > CUE_TASKS': write /ws/.cuedeck/.cache/nats/jetstream/$G/streams/CUE_TASKS/msgs/1.blk: no space left on device",
		"JetStream stream '$G > KV_cue_docs' critical write error: write ...: no space left on device",
		"Filestore [KV_cue_vectors] indexCacheBuf corrupt record state in /x/1.blk: dlen 1 slen 2 index 3 rl 4 lbuf 5",
		"Filestore [CUE_INGEST] Stream state detected prior state, could not locate msg block 5",
		"Filestore [CUE_EMBED] Stream state outdated, last block has additional entries, will rebuild",
		"JetStream failed to store a msg on stream '$G > CUE_INGEST': maximum bytes exceeded",
	} {
		d.note(line)
	}
	if w := d.writeErrors(); len(w) != 2 || w["CUE_TASKS"] == "" || w["KV_cue_docs"] == "" {
		t.Errorf("write errors: %v", w)
	}
	if len(d.found) != 1 || d.found["KV_cue_vectors"] == "" {
		t.Errorf("damaged: %v; want only the corrupt block", d.found)
	}
	d.clearWriteErrors()
	if len(d.writeErrors()) != 0 {
		t.Error("write errors kept after a restart")
	}
}
