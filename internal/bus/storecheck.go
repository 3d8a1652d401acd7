package bus

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/minio/highwayhash"
)

// The embedded server's file store, as nats-server v2 writes it: each
// stream's messages in msgs/<index>.blk, records of a 22-byte header
// (length with a has-headers bit, sequence, timestamp, subject length),
// the subject, the optional headers, the payload and an 8-byte
// HighwayHash of them keyed by the stream name and block index. The
// server checks these hashes only when it rebuilds a block's index; with
// a valid index it serves a damaged block as if it were whole, or stalls
// a consumer at the damaged record. CheckStoreFiles reads them first.
const (
	blkHeaderSize   = 22
	blkHashSize     = 8
	blkHeadersBit   = 1 << 31
	blkMaxRecordLen = 32 << 20
)

// CheckStoreFiles verifies the checksum of every message record in the
// JetStream store under storeDir (EmbeddedConfig.StoreDir) before the
// server opens it, and returns the streams with a damaged record, with
// what was found. A record cut short at the end of the last block of a
// stream is not damage: a crash leaves one, and the server drops it.
func CheckStoreFiles(storeDir string) (map[string]string, error) {
	damaged := map[string]string{}
	accounts, err := os.ReadDir(filepath.Join(storeDir, "jetstream"))
	if errors.Is(err, fs.ErrNotExist) {
		return damaged, nil
	}
	if err != nil {
		return nil, fmt.Errorf("bus: read the JetStream store %s: %w", storeDir, err)
	}
	for _, acc := range accounts {
		streams, err := os.ReadDir(filepath.Join(storeDir, "jetstream", acc.Name(), "streams"))
		if err != nil {
			continue
		}
		for _, st := range streams {
			dir := filepath.Join(storeDir, "jetstream", acc.Name(), "streams", st.Name(), "msgs")
			if why := checkStreamBlocks(st.Name(), dir); why != "" {
				damaged[st.Name()] = why
			}
		}
	}
	return damaged, nil
}

// checkStreamBlocks checks the blocks of stream in dir, and says what is
// wrong with the first damaged one, "" when none is.
func checkStreamBlocks(stream, dir string) string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return ""
	}
	last := uint32(0)
	var blocks []uint32
	for _, e := range entries {
		idx, ok := strings.CutSuffix(e.Name(), ".blk")
		n, err := strconv.ParseUint(idx, 10, 32)
		if !ok || err != nil {
			continue
		}
		blocks = append(blocks, uint32(n))
		last = max(last, uint32(n))
	}
	for _, idx := range blocks {
		buf, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("%d.blk", idx)))
		if err != nil {
			return fmt.Sprintf("%d.blk cannot be read: %v", idx, err)
		}
		if why := checkBlock(stream, idx, buf, idx == last); why != "" {
			return fmt.Sprintf("%d.blk: %s", idx, why)
		}
	}
	return ""
}

func checkBlock(stream string, idx uint32, buf []byte, lastBlock bool) string {
	key := sha256.Sum256([]byte(fmt.Sprintf("%s-%d", stream, idx)))
	hh, err := highwayhash.New64(key[:])
	if err != nil {
		return ""
	}
	le := binary.LittleEndian
	var sum [blkHashSize]byte
	for off := 0; off < len(buf); {
		if off+blkHeaderSize > len(buf) {
			if lastBlock {
				return "" // a record cut short by a crash
			}
			return fmt.Sprintf("a record header cut short at offset %d", off)
		}
		hdr := buf[off : off+blkHeaderSize]
		rl, slen := le.Uint32(hdr[0:]), int(le.Uint16(hdr[20:]))
		hasHeaders := rl&blkHeadersBit != 0
		rl &^= blkHeadersBit
		shlen := slen
		if hasHeaders {
			shlen += 4
		}
		dlen := int(rl) - blkHeaderSize
		if dlen < 0 || shlen > dlen-blkHashSize || rl > blkMaxRecordLen {
			return fmt.Sprintf("a record of impossible length at offset %d", off)
		}
		if off+int(rl) > len(buf) {
			if lastBlock {
				return ""
			}
			return fmt.Sprintf("a record cut short at offset %d", off)
		}
		data := buf[off+blkHeaderSize : off+int(rl)]
		hh.Reset()
		hh.Write(hdr[4:20])
		hh.Write(data[:slen])
		if hasHeaders {
			hh.Write(data[slen+4 : dlen-blkHashSize])
		} else {
			hh.Write(data[slen : dlen-blkHashSize])
		}
		if string(hh.Sum(sum[:0])) != string(data[dlen-blkHashSize:]) {
			return fmt.Sprintf("checksum mismatch in the record at offset %d", off)
		}
		off += int(rl)
	}
	return ""
}
