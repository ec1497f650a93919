import ArgumentParser

/// A word that begins with a single "-" and holds an `h` among letters that name no option (`-broken.ahap`, a file's
/// name): ArgumentParser reads such a word as short options, finds `-h` among them and shows the help with status 0,
/// rather than saying that the others name nothing, so `haptics validate *.ahap` passed, checking nothing, when one
/// file's name began with "-". Looked for once ArgumentParser made its help command: a word whose letters are not
/// all short options of the command (its help lists them: `-v, --verbose`) was no option at all.
struct UnknownShortOptions: Equatable {
    /// The command the word was given to, as typed: `haptics validate`.
    let command: String
    /// The word, as typed.
    let typed: String

    /// The first word of `arguments` (the command line without the program's name, up to a `--`) that ArgumentParser
    /// took for short options with `-h` among them and whose other letters are not all short options of the command
    /// `arguments` name under `root`; nil when there is none (the help was asked for).
    init?(arguments: [String], root: any ParsableCommand.Type) {
        let (command, path) = CommandNames.command(namedBy: arguments, under: root)
        let letters = Self.shortOptions(of: command, under: root)
        guard
            let word = arguments.prefix(while: { $0 != "--" }).first(where: { word in
                word.hasPrefix("-") && !word.hasPrefix("--") && word.count > 2 && word.contains("h")
                    && !word.dropFirst().allSatisfy(letters.contains)
            })
        else { return nil }
        self.command = path.joined(separator: " ")
        typed = word
    }

    /// The letters of `command`'s short options, as its help lists them (`  -v, --verbose`), `h` among them.
    static func shortOptions(of command: any ParsableCommand.Type, under root: any ParsableCommand.Type) -> Set<
        Character
    > {
        var letters: Set<Character> = ["h"]
        for line in root.helpMessage(for: command, columns: 1000).split(separator: "\n") {
            let trimmed = line.drop { $0 == " " }
            guard trimmed.count >= 2, trimmed.first == "-", let letter = trimmed.dropFirst().first, letter != "-",
                trimmed.dropFirst(2).first.map({ $0 == "," || $0 == " " }) ?? true
            else { continue }
            letters.insert(letter)
        }
        return letters
    }

    /// What the user reads: what failed, why, and how to name a file whose name begins with "-".
    var failure: CommandFailure {
        CommandFailure(
            "unknown option \"\(typed)\"", why: "\(command) has no options of those letters",
            fix: "A file whose name begins with \"-\" is named ./\(typed), or after --: `\(command) -- \(typed)`. "
                + "`\(command) --help` lists the options.")
    }
}
