// Writes a JSON tree as text: the AHAP encoder's back end, and the CLI's (its JSON lines, `haptics render --format
// json`). Numbers use Swift's shortest round-tripping form, so parse -> encode -> parse reproduces every `Double`
// exactly.

/// A value JSON cannot hold (NaN or an infinity), with where it was.
package struct JSONWriteError: Error, Sendable {
    package var path: [JSONPathComponent]
}

package struct JSONWriter {
    private var output: [UInt8] = []
    private var path: [JSONPathComponent] = []
    private let prettyPrinted: Bool
    private static let indentWidth = 2
    /// Integral values below 2^53 are written without a fraction ("2", not "2.0"): exact, and what people write.
    private static let exactIntegerLimit: Double = 9_007_199_254_740_992

    private init(prettyPrinted: Bool) {
        self.prettyPrinted = prettyPrinted
    }

    /// UTF-8 text of `value`; pretty-printed with two-space indentation and a final newline, or compact.
    package static func encode(_ value: JSONValue, prettyPrinted: Bool) throws(JSONWriteError) -> [UInt8] {
        var writer = JSONWriter(prettyPrinted: prettyPrinted)
        try writer.write(value, indent: 0)
        if prettyPrinted { writer.output.append(UInt8(ascii: "\n")) }
        return writer.output
    }

    /// Compact text of a value, for messages and for metadata values that are not strings. Non-finite numbers
    /// (impossible in a parsed tree) are written as `null`.
    package static func compactText(of value: JSONValue) -> String {
        let bytes = (try? encode(value, prettyPrinted: false)) ?? Array("null".utf8)
        return String(decoding: bytes, as: UTF8.self)
    }

    private mutating func newline(indent: Int) {
        guard prettyPrinted else { return }
        output.append(UInt8(ascii: "\n"))
        output.append(contentsOf: repeatElement(UInt8(ascii: " "), count: indent * Self.indentWidth))
    }

    private mutating func write(_ value: JSONValue, indent: Int) throws(JSONWriteError) {
        switch value {
        case .null:
            output.append(contentsOf: "null".utf8)
        case .bool(let flag):
            output.append(contentsOf: (flag ? "true" : "false").utf8)
        case .number(let number):
            guard number.isFinite else { throw JSONWriteError(path: path) }
            if number == number.rounded(), abs(number) < Self.exactIntegerLimit, number != 0 || number.sign == .plus {
                output.append(contentsOf: String(Int64(number)).utf8)
            } else {
                output.append(contentsOf: number.description.utf8)
            }
        case .string(let text):
            writeString(text)
        case .array(let elements):
            output.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                newline(indent: indent + 1)
                path.append(.index(index))
                try write(element, indent: indent + 1)
                path.removeLast()
            }
            if !elements.isEmpty { newline(indent: indent) }
            output.append(UInt8(ascii: "]"))
        case .object(let members):
            output.append(UInt8(ascii: "{"))
            for (index, member) in members.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                newline(indent: indent + 1)
                writeString(member.key)
                output.append(contentsOf: (prettyPrinted ? ": " : ":").utf8)
                path.append(.key(member.key))
                try write(member.value, indent: indent + 1)
                path.removeLast()
            }
            if !members.isEmpty { newline(indent: indent) }
            output.append(UInt8(ascii: "}"))
        }
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)
    /// Bytes below this are control characters, which JSON strings must escape (`\u00XX`).
    private static let firstPrintableByte: UInt8 = 0x20

    private mutating func writeString(_ text: String) {
        output.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): output.append(contentsOf: "\\\"".utf8)
            case UInt8(ascii: "\\"): output.append(contentsOf: "\\\\".utf8)
            case 0x0A: output.append(contentsOf: "\\n".utf8)
            case 0x0D: output.append(contentsOf: "\\r".utf8)
            case 0x09: output.append(contentsOf: "\\t".utf8)
            case 0..<Self.firstPrintableByte:
                output.append(contentsOf: "\\u00".utf8)
                output.append(Self.hexDigits[Int(byte >> 4)])
                output.append(Self.hexDigits[Int(byte & 0x0F)])
            default:
                output.append(byte)
            }
        }
        output.append(UInt8(ascii: "\""))
    }
}
