import Testing

@testable import haptics

/// A word ArgumentParser takes for short options with `-h` among them: the help it would show is a usage error
/// when the word's other letters name no option of the command (a file's name, `-broken.ahap`).
struct UnknownShortOptionsTests {
    @Test(arguments: [
        (["validate", "g.ahap", "-broken.ahap"], "haptics validate", "-broken.ahap"),
        (["render", "-nope.ahap"], "haptics render", "-nope.ahap"),
        (["audio", "play", "-hx.wav"], "haptics audio play", "-hx.wav"),
        (["-hello"], "haptics", "-hello"),
    ])
    func aWordWhoseLettersAreNotAllShortOptionsOfItsCommandIsFound(
        arguments: [String], command: String, typed: String
    ) throws {
        let found = try #require(UnknownShortOptions(arguments: arguments, root: Haptics.self))
        #expect(found.command == command && found.typed == typed)
        #expect("\(found.failure)".contains("\(command) -- \(typed)"), "says how to name such a file")
    }

    /// The help asked for (`-h`, `--help`, `h` beside the command's own short options), a word after `--`, and a
    /// word without `h` (ArgumentParser's own usage error) are left alone.
    @Test(arguments: [
        ["validate", "-h"], ["validate", "--help"], ["devices", "-vh"], ["audio", "play", "-vh"], ["-h"],
        ["validate", "--", "-broken.ahap"], ["validate", "-xbroken.aap"], ["validate", "x.ahap"],
    ])
    func theHelpAskedForAndWordsWithoutHAreLeftAlone(arguments: [String]) {
        #expect(UnknownShortOptions(arguments: arguments, root: Haptics.self) == nil)
    }

    @Test func theShortOptionsAreThoseTheCommandsHelpLists() {
        #expect(UnknownShortOptions.shortOptions(of: DevicesCommand.self, under: Haptics.self) == ["h", "v"])
        #expect(UnknownShortOptions.shortOptions(of: ValidateCommand.self, under: Haptics.self) == ["h"])
    }
}
