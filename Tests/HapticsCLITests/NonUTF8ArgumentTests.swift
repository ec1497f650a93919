import Testing

@testable import haptics

/// How an argument that is not UTF-8 is found, which command it was given to, and how it is shown.
struct NonUTF8ArgumentTests {
    @Test func theFirstArgumentThatIsNotUTF8IsFoundForTheCommandItWasGivenTo() throws {
        let found = try #require(
            NonUTF8Argument(
                arguments: [Array("audio".utf8), Array("play".utf8), [0x78, 0xE9, 0x2E], [0xFF]], root: Haptics.self))
        #expect(found.command == "haptics audio play")
        #expect(found.shown == #""x\xE9.""#)
        let root = try #require(NonUTF8Argument(arguments: [[0x70, 0xFF]], root: Haptics.self))
        #expect(root.command == "haptics" && root.shown == #""p\xFF""#)
    }

    @Test func argumentsThatAreAllUTF8AreLeftToTheParser() {
        #expect(NonUTF8Argument(arguments: [Array("play".utf8), Array("café.ahap".utf8)], root: Haptics.self) == nil)
        #expect(NonUTF8Argument(arguments: [], root: Haptics.self) == nil)
    }

    /// The text around an odd byte is escaped as every message escapes a name (a backslash doubled, an escape
    /// sequence's ESC written `\u001b`), so that `\xE9` can only be a byte, and the name cannot act on the terminal.
    @Test func theTextAroundAnOddByteIsEscapedAsInEveryMessage() throws {
        let found = try #require(
            NonUTF8Argument(arguments: [Array("a\\x\u{1b}[2J".utf8) + [0xC3]], root: Haptics.self))
        #expect(found.shown == #""a\\x\u001b[2J\xC3""#)
    }
}
