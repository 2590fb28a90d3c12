// Package docs is wcomm's reference, one markdown file per topic: NAME.md is printed by
// `wcomm help NAME`, and its first line ("# Title") is the line `wcomm help` lists it with. The
// files are embedded in the binary, so the pages a person reads here and the help a binary
// prints are the same text. Adding a topic is adding a file.
package docs

import "embed"

// Topics holds the topic files, *.md of this folder.
//
//go:embed *.md
var Topics embed.FS
