package bus

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/klauspost/compress/s2"
	"github.com/minio/highwayhash"
)

// The embedded server's file store, as nats-server v2 writes it: each
// stream's messages in msgs/<index>.blk, records of a 22-byte header
// (length with a has-headers bit, sequence, timestamp, subject length),
// the subject, the optional headers, the payload and an 8-byte
// HighwayHash of them keyed by the stream name and block index; a sealed
// block of a compressed stream holds them S2-compressed. The
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

// decompressBlock undoes the S2 compression of a sealed block of a
// compressed stream: a "cmp" header with the algorithm (1, S2) and the
// original size, the compressed records, and the block's last 8 bytes
// as they were. ok is false for a block that is not compressed.
func decompressBlock(buf []byte) (out []byte, ok bool, err error) {
	if len(buf) < 5 || string(buf[:3]) != "cmp" || buf[3] != 1 {
		return buf, false, nil
	}
	_, n := binary.Uvarint(buf[4:])
	if n <= 0 || len(buf) < 4+n+blkHashSize {
		return nil, true, errors.New("a compressed block with a broken header")
	}
	body := buf[4+n : len(buf)-blkHashSize]
	out, err = io.ReadAll(s2.NewReader(bytes.NewReader(body)))
	if err != nil {
		return nil, true, err
	}
	return append(out, buf[len(buf)-blkHashSize:]...), true, nil
}

func checkBlock(stream string, idx uint32, buf []byte, lastBlock bool) string {
	raw, compressed, err := decompressBlock(buf)
	switch {
	case err != nil && len(buf) >= 24145251:
		// A record of exactly this length reads as a compression header
		// (the server makes the same exception): check it as records.
	case err != nil:
		return fmt.Sprintf("a compressed block that does not decompress: %v", err)
	case compressed:
		buf, lastBlock = raw, false
	}
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
