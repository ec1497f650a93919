// A small encoder of HID report descriptor items, so that a long descriptor (the PID joystick's) reads as the
// collections and fields it declares instead of a byte table. Short items only: a prefix byte (tag, type,
// size code) and 0, 1, 2 or 4 data bytes, little-endian. Pure.

/// Builds a report descriptor item by item.
package struct HIDDescriptorBuilder: Sendable {
    package private(set) var bytes: [UInt8] = []

    package init() {}

    /// What a main item (Input, Output, Feature) declares: data or constant, variable or array.
    package enum FieldKind: UInt32, Sendable {
        /// Data, Array, Absolute: the field holds indices into its usage list.
        case array = 0x00
        /// Constant: padding.
        case padding = 0x01
        /// Data, Variable, Absolute: one value per usage.
        case variable = 0x02
    }

    package enum MainItem: UInt8, Sendable {
        case input = 0x8
        case output = 0x9
        case feature = 0xb
    }

    package enum CollectionKind: UInt32, Sendable {
        case physical = 0x00
        case application = 0x01
        case logical = 0x02
    }

    private enum ItemType: UInt8 {
        case main = 0
        case global = 1
        case local = 2
    }

    /// One short item: the smallest data size that holds `value` (read as signed when `signed`).
    private mutating func item(_ tag: UInt8, _ type: ItemType, _ value: Int64?, signed: Bool = false) {
        guard let value else {
            bytes.append(tag << 4 | type.rawValue << 2)
            return
        }
        let size: Int
        if signed {
            size = (-128...127).contains(value) ? 1 : (-32768...32767).contains(value) ? 2 : 4
        } else {
            size = value <= 0xff ? 1 : value <= 0xffff ? 2 : 4
        }
        let sizeCode: UInt8 = size == 4 ? 3 : UInt8(size)
        bytes.append(tag << 4 | type.rawValue << 2 | sizeCode)
        for index in 0..<size { bytes.append(UInt8(truncatingIfNeeded: value >> (8 * index))) }
    }

    package mutating func usagePage(_ page: UInt16) { item(0x0, .global, Int64(page)) }
    package mutating func usage(_ usage: UInt16) { item(0x0, .local, Int64(usage)) }
    package mutating func reportID(_ id: UInt8) { item(0x8, .global, Int64(id)) }
    package mutating func reportSize(_ bits: Int) { item(0x7, .global, Int64(bits)) }
    package mutating func reportCount(_ count: Int) { item(0x9, .global, Int64(count)) }

    package mutating func logical(_ range: ClosedRange<Int64>) {
        item(0x1, .global, range.lowerBound, signed: true)
        item(0x2, .global, range.upperBound, signed: true)
    }

    /// Unit (a HID unit code, 0 for none) and unit exponent (-8...7, stored as a 4-bit two's complement).
    package mutating func unit(_ code: UInt32, exponent: Int) {
        item(0x6, .global, Int64(code))
        item(0x5, .global, Int64(exponent & 0x0f))
    }

    package mutating func main(_ main: MainItem, _ kind: FieldKind) { item(main.rawValue, .main, Int64(kind.rawValue)) }

    /// A collection with its usage (on the current usage page), its body, and the end item.
    package mutating func collection(
        _ kind: CollectionKind, usage: UInt16, _ body: (inout HIDDescriptorBuilder) -> Void
    ) {
        self.usage(usage)
        item(0xa, .main, Int64(kind.rawValue))
        body(&self)
        item(0xc, .main, nil)
    }

    /// One variable field per call: `usages.count` values of `bits` each, in `logical`, one usage each (report
    /// count equal to the number of usages, which hid-pidff requires of every value it writes).
    package mutating func variables(
        _ usages: [UInt16], bits: Int, logical range: ClosedRange<Int64>, _ main: MainItem
    ) {
        logical(range)
        reportSize(bits)
        reportCount(usages.count)
        for usage in usages { self.usage(usage) }
        self.main(main, .variable)
    }

    /// An array field of one `bits`-wide value selecting one of `usages`: value 1 the first (logical minimum
    /// 1, as hid-pidff requires of the PID arrays), 0 none.
    package mutating func array(_ usages: [UInt16], bits: Int, _ main: MainItem) {
        logical(1...Int64(usages.count))
        reportSize(bits)
        reportCount(1)
        for usage in usages { self.usage(usage) }
        self.main(main, .array)
    }

    /// Constant bits that pad a field to a byte.
    package mutating func padding(bits: Int, _ main: MainItem) {
        reportSize(bits)
        reportCount(1)
        self.main(main, .padding)
    }
}
