package vector

import (
	"encoding/binary"
	"math"
)

// AppendCodes appends v to dst as the stores and the wire keep vectors:
// its scale as a little-endian float32, then its int8 codes (Quantize), one
// byte per dimension: 4+len(v) bytes.
func AppendCodes(dst []byte, v []float32) []byte {
	codes := make([]int8, len(v))
	dst = binary.LittleEndian.AppendUint32(dst, math.Float32bits(Quantize(codes, v)))
	for _, c := range codes {
		dst = append(dst, byte(c))
	}
	return dst
}

// CodesScale is the scale AppendCodes wrote at the start of b (at least 4
// bytes long).
func CodesScale(b []byte) float32 { return math.Float32frombits(binary.LittleEndian.Uint32(b)) }

// DecodeCodes writes into dst, len(b)-4 long, the vector AppendCodes wrote
// as b: scale × code.
func DecodeCodes(dst []float32, b []byte) {
	scale := CodesScale(b)
	for i, c := range b[4:] {
		dst[i] = scale * float32(int8(c))
	}
}
