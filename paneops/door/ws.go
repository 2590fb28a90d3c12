package door

import (
	"bufio"
	"crypto/rand"
	"crypto/sha1"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/textproto"
	"strings"
	"sync"
	"time"
)

// wsConn is the client end of a WebSocket (RFC 6455) over a connection already made (Codex's
// app-server's Unix socket): the upgrade, then text messages out, masked as a client's must be,
// and messages in, joined from their fragments, pings answered. It is written here, not taken
// from a WebSocket library, because every such library links net/http and crypto/tls into the
// program, and wcomm starts a process per command: measured, they made each start 0.6 ms of CPU
// (a quarter) dearer, for a door that speaks a handful of small JSON messages.
type wsConn struct {
	c     net.Conn
	r     *bufio.Reader
	limit int64
	// wmu keeps frames whole: a follower's reader answers pings while its owner writes replies.
	wmu sync.Mutex
}

// wsGUID is the constant the server's accept key is made with (RFC 6455, 1.3).
const wsGUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

// WebSocket opcodes.
const (
	wsCont  = 0x0
	wsText  = 0x1
	wsBin   = 0x2
	wsClose = 0x8
	wsPing  = 0x9
	wsPong  = 0xA
)

// wsHandshake upgrades c with GET / and checks the server's answer: 101 with the accept key of
// this request's key.
func wsHandshake(c net.Conn, deadline time.Time) (*wsConn, error) {
	_ = c.SetDeadline(deadline)
	defer c.SetDeadline(time.Time{})
	var nonce [16]byte
	if _, err := rand.Read(nonce[:]); err != nil {
		return nil, err
	}
	key := base64.StdEncoding.EncodeToString(nonce[:])
	req := "GET / HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
		"Sec-WebSocket-Key: " + key + "\r\nSec-WebSocket-Version: 13\r\n\r\n"
	if _, err := io.WriteString(c, req); err != nil {
		return nil, err
	}
	r := bufio.NewReader(c)
	tp := textproto.NewReader(r)
	status, err := tp.ReadLine()
	if err != nil {
		return nil, fmt.Errorf("websocket upgrade: %w", err)
	}
	if f := strings.Fields(status); len(f) < 2 || f[1] != "101" {
		return nil, fmt.Errorf("websocket upgrade refused: %q", status)
	}
	h, err := tp.ReadMIMEHeader()
	if err != nil {
		return nil, fmt.Errorf("websocket upgrade: %w", err)
	}
	sum := sha1.Sum([]byte(key + wsGUID))
	if h.Get("Sec-Websocket-Accept") != base64.StdEncoding.EncodeToString(sum[:]) {
		return nil, errors.New("websocket upgrade: the server's accept key does not match")
	}
	return &wsConn{c: c, r: r, limit: 1 << 20}, nil
}

func (w *wsConn) SetReadLimit(n int64)               { w.limit = n }
func (w *wsConn) SetReadDeadline(t time.Time) error  { return w.c.SetReadDeadline(t) }
func (w *wsConn) SetWriteDeadline(t time.Time) error { return w.c.SetWriteDeadline(t) }
func (w *wsConn) Close() error                       { return w.c.Close() }

// writeFrame writes one final frame of opcode op with payload p, masked.
func (w *wsConn) writeFrame(op byte, p []byte) error {
	hdr := []byte{0x80 | op, 0}
	switch n := len(p); {
	case n < 126:
		hdr[1] = byte(n)
	case n <= 0xFFFF:
		hdr[1] = 126
		hdr = binary.BigEndian.AppendUint16(hdr, uint16(n))
	default:
		hdr[1] = 127
		hdr = binary.BigEndian.AppendUint64(hdr, uint64(n))
	}
	hdr[1] |= 0x80 // a client masks every frame (RFC 6455, 5.3)
	var mask [4]byte
	if _, err := rand.Read(mask[:]); err != nil {
		return err
	}
	hdr = append(hdr, mask[:]...)
	buf := make([]byte, 0, len(hdr)+len(p))
	buf = append(buf, hdr...)
	for i, b := range p {
		buf = append(buf, b^mask[i%4])
	}
	w.wmu.Lock()
	defer w.wmu.Unlock()
	_, err := w.c.Write(buf)
	return err
}

// WriteText writes data as one text message.
func (w *wsConn) WriteText(data []byte) error { return w.writeFrame(wsText, data) }

// ReadMessage returns the next data message (text or binary) and its opcode, joining its
// fragments and answering pings on the way; a close frame ends it with io.EOF.
func (w *wsConn) ReadMessage() (op byte, data []byte, err error) {
	first := true
	for {
		fin, fop, p, err := w.readFrame()
		if err != nil {
			return 0, nil, err
		}
		switch fop {
		case wsPing:
			if err := w.writeFrame(wsPong, p); err != nil {
				return 0, nil, err
			}
			continue
		case wsPong:
			continue
		case wsClose:
			_ = w.writeFrame(wsClose, nil)
			return 0, nil, io.EOF
		case wsText, wsBin:
			if !first {
				return 0, nil, errors.New("websocket: a new message began inside a fragmented one")
			}
			op, first = fop, false
		case wsCont:
			if first {
				return 0, nil, errors.New("websocket: a continuation with no message to continue")
			}
		default:
			return 0, nil, fmt.Errorf("websocket: unknown opcode %d", fop)
		}
		if int64(len(data)+len(p)) > w.limit {
			return 0, nil, fmt.Errorf("websocket: a message over %d bytes", w.limit)
		}
		data = append(data, p...)
		if fin {
			return op, data, nil
		}
	}
}

// readFrame reads one frame: whether it is final, its opcode and its payload (unmasked).
func (w *wsConn) readFrame() (fin bool, op byte, p []byte, err error) {
	var h [2]byte
	if _, err := io.ReadFull(w.r, h[:]); err != nil {
		return false, 0, nil, err
	}
	fin, op = h[0]&0x80 != 0, h[0]&0x0F
	n := uint64(h[1] & 0x7F)
	switch n {
	case 126:
		var b [2]byte
		if _, err := io.ReadFull(w.r, b[:]); err != nil {
			return false, 0, nil, err
		}
		n = uint64(binary.BigEndian.Uint16(b[:]))
	case 127:
		var b [8]byte
		if _, err := io.ReadFull(w.r, b[:]); err != nil {
			return false, 0, nil, err
		}
		n = binary.BigEndian.Uint64(b[:])
	}
	if n > uint64(w.limit) {
		return false, 0, nil, fmt.Errorf("websocket: a frame of %d bytes, over %d", n, w.limit)
	}
	var mask [4]byte
	masked := h[1]&0x80 != 0
	if masked {
		if _, err := io.ReadFull(w.r, mask[:]); err != nil {
			return false, 0, nil, err
		}
	}
	p = make([]byte, n)
	if _, err := io.ReadFull(w.r, p); err != nil {
		return false, 0, nil, err
	}
	if masked {
		for i := range p {
			p[i] ^= mask[i%4]
		}
	}
	return fin, op, p, nil
}
