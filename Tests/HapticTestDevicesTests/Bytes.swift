// Report bytes written as hexadecimal in the tests, as the records and `haptics emulate` print them.

/// The bytes of a hexadecimal string with two digits per byte and nothing between them.
func bytes(_ hex: String) -> [UInt8] {
    var result: [UInt8] = []
    var index = hex.startIndex
    while index < hex.endIndex {
        let next = hex.index(index, offsetBy: 2)
        result.append(UInt8(hex[index..<next], radix: 16)!)
        index = next
    }
    return result
}
