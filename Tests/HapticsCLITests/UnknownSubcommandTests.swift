import Testing

@testable import haptics

/// How a word where a subcommand goes is found to name none, and which subcommands it is near.
struct UnknownSubcommandTests {
    @Test(arguments: [
        ("play", "play", 0), ("plya", "play", 1), ("pla", "play", 1), ("plaay", "play", 1), ("ploy", "play", 1),
        ("prboe", "probe", 1), ("", "play", 4), ("render", "replay", 4), ("abc", "ca", 3),
    ])
    func editDistanceCountsInsertsDeletesReplacementsAndSwapsOfNeighbours(a: String, b: String, distance: Int) {
        #expect(UnknownSubcommand.editDistance(a, b) == distance)
        #expect(UnknownSubcommand.editDistance(b, a) == distance)
    }

    static let names = ["virtual-pad", "emulate", "devices", "probe", "play", "replay", "render"]

    @Test(arguments: [
        ("plya", ["play"]), ("prob", ["probe"]), ("PLAY", ["play"]), ("devcies", ["devices"]),
        ("virtual", ["virtual-pad"]), ("re", ["replay", "render"]), ("rplay", ["replay", "play"]),
        ("p", []), ("x.ahap", []), ("zzzzzz", []),
    ])
    func theNearestAreTheSubcommandsAWordBeginsElseThoseFewEditsAway(word: String, nearest: [String]) {
        #expect(Set(UnknownSubcommand.nearest(to: word, among: Self.names)) == Set(nearest))
    }

    @Test func aWordWhereASubcommandGoesThatNamesNoneIsFoundAtItsLevel() throws {
        let root = try #require(UnknownSubcommand(arguments: ["plya", "x.ahap"], root: Haptics.self))
        #expect(root.command == "haptics" && root.typed == "plya" && root.nearest == ["play"])
        let nested = try #require(UnknownSubcommand(arguments: ["audio", "plya"], root: Haptics.self))
        #expect(
            nested.command == "haptics audio" && nested.nearest == ["play"]
                && nested.subcommands == ["devices", "play"])
    }

    /// Subcommands that all exist leave the error to ArgumentParser: a wrong option or argument, `help`, or an
    /// option first.
    @Test(arguments: [
        [String](), ["play", "--bogus"], ["play", "plya"], ["help", "plya"], ["--frobnicate"], ["audio"],
        ["audio", "play", "x"], ["audio", "--help"],
    ])
    func commandLinesWhoseSubcommandsExistAreNotMisspelt(arguments: [String]) {
        #expect(UnknownSubcommand(arguments: arguments, root: Haptics.self) == nil)
    }
}
