package verifier_test

import (
	"encoding/hex"
	"fmt"
)

// The test vectors below are the classic RFC 6962 eight-leaf tree of
// Certificate Transparency, as published in transparency-dev/merkle
// proof/verify_test.go (commit 02194e9afb6c1d95b5381350007963aa70fff472;
// the same vectors are in google/certificate-transparency-go
// merkletree tests). Hashes are copied from there; the leaves' data, the
// roots of every prefix of the tree and the proofs are theirs. The
// upstream inclusion vectors number leaves from 1; here they are 0-based.

// leafData are the eight leaves of the tree.
var leafData = [][]byte{
	dh(""),
	dh("00"),
	dh("10"),
	dh("2021"),
	dh("3031"),
	dh("40414243"),
	dh("5051525354555657"),
	dh("606162636465666768696a6b6c6d6e6f"),
}

// roots[i] is the root of the tree of the first i+1 leaves.
var roots = [][]byte{
	dh("6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d"),
	dh("fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125"),
	dh("aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77"),
	dh("d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7"),
	dh("4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4"),
	dh("76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef"),
	dh("ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c"),
	dh("5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328"),
}

type inclusionVector struct {
	index, size uint64
	proof       [][]byte
}

var inclusionVectors = []inclusionVector{
	{0, 1, nil},
	{0, 8, [][]byte{
		dh("96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7"),
		dh("5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e"),
		dh("6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4"),
	}},
	{5, 8, [][]byte{
		dh("bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b"),
		dh("ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0"),
		dh("d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7"),
	}},
	{2, 3, [][]byte{
		dh("fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125"),
	}},
	{1, 5, [][]byte{
		dh("6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d"),
		dh("5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e"),
		dh("bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b"),
	}},
}

type consistencyVector struct {
	size1, size2 uint64
	proof        [][]byte
}

var consistencyVectors = []consistencyVector{
	{1, 1, nil},
	{1, 8, [][]byte{
		dh("96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7"),
		dh("5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e"),
		dh("6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4"),
	}},
	{6, 8, [][]byte{
		dh("0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a"),
		dh("ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0"),
		dh("d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7"),
	}},
	{2, 5, [][]byte{
		dh("5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e"),
		dh("bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b"),
	}},
	{6, 7, [][]byte{
		dh("0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a"),
		dh("b08693ec2e721597130641e8211e7eedccb4c26413963eee6c1e2ed16ffb1a5f"),
		dh("d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7"),
	}},
}

var (
	emptyTreeHash = dh("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
	someHash      = dh("abacaba000000000000000000000000000000000000000000060061e00123456")
)

// dh decodes hex; the vectors are constants, so a bad one is a bug here.
func dh(s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		panic(fmt.Sprintf("bad hex %q: %v", s, err))
	}
	return b
}
