package dynamicinformer

import (
	"fmt"

	"github.com/kreact/kreact/projection"
)

// cut returns o cut down to keep (projection.Fields.Kept) without
// decoding it: the values kept are copied as they are encoded, and the
// others skipped. It is the compact form of what Fields.Apply makes of
// o's decoded object (TestCutMatchesShape), at a fraction of the cost of
// decoding, cutting and encoding again.
func cut(o *compactObject, keep *projection.Node) *compactObject {
	c := cutter{d: decoder{s: o.data}, e: newEncoder()}
	if len(c.d.s) > 0 && c.d.s[0] == 'm' {
		c.d.off++
		c.mapping(keep, inObject)
	} else {
		c.d.fail()
	}
	out := c.e.finish()
	if c.d.err != nil {
		// Only a bug in encode could cause it: say where.
		panic(fmt.Sprintf("dynamicinformer: corrupt compact object %s/%s: %v", o.GetNamespace(), o.GetName(), c.d.err))
	}
	return &out
}

type cutter struct {
	d decoder
	e encoder
}

// mapping copies what keep keeps of the map at c.d.off (after its tag);
// a nil keep keeps every entry whole. The identity strings of the
// object's metadata (at inMetadata) are recorded, as encoder.value does,
// also when the metadata is kept whole.
func (c *cutter) mapping(keep *projection.Node, at where) {
	n := c.d.count()
	p := c.e.open('m')
	kept := 0
	for range n {
		k := c.d.key()
		whole, kid := keep == nil, (*projection.Node)(nil)
		if !whole {
			kid = keep.Keys[k]
			whole = kid != nil && kid.Whole
		}
		tag := byte(0)
		if c.d.off < len(c.d.s) {
			tag = c.d.s[c.d.off]
		}
		isMap := tag == 'm'
		switch {
		case at == inObject && k == "metadata" && (whole || kid != nil) && isMap:
			if whole {
				kid = nil
			}
			appendKey(&c.e, k)
			c.d.off++
			c.mapping(kid, inMetadata)
		case whole && at == inMetadata && tag == 's' && metaIndex(k) >= 0:
			appendKey(&c.e, k)
			c.d.off++
			appendIdentity(&c.e, metaIndex(k), c.d.str())
		case whole:
			appendKey(&c.e, k)
			start := c.d.off
			c.d.skip()
			c.e.buf = append(c.e.buf, c.d.s[start:c.d.off]...)
		case kid != nil && isMap:
			appendKey(&c.e, k)
			c.d.off++
			c.mapping(kid, inValue)
		default:
			c.d.skip()
			continue
		}
		kept++
	}
	c.e.close(p, kept)
}

// skip moves past the value at d.off.
func (d *decoder) skip() {
	if d.off >= len(d.s) {
		d.fail()
		return
	}
	tag := d.s[d.off]
	d.off++
	switch tag {
	case 'n', 't', 'f':
	case 'i':
		d.uvarint()
	case 'd':
		if len(d.s)-d.off < 8 {
			d.fail()
			return
		}
		d.off += 8
	case 's':
		d.off += d.count()
	case 'm':
		for n := d.count(); n > 0 && d.err == nil; n-- {
			d.key()
			d.skip()
		}
	case 'l':
		for n := d.count(); n > 0 && d.err == nil; n-- {
			d.skip()
		}
	default:
		d.err = fmt.Errorf("unknown tag %q at %d", tag, d.off-1)
		d.off = len(d.s)
	}
}
