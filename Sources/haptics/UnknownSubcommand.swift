import ArgumentParser

/// A word where a subcommand goes that names none (`haptics plya x.ahap`, `haptics audio plya`): ArgumentParser says
/// only "unexpected argument"; this says which command has no such subcommand, the nearest it has, and what to
/// run.
struct UnknownSubcommand: Equatable {
    /// The command whose subcommand was misspelt, as typed: `haptics`, `haptics audio`.
    let command: String
    /// The word typed where its subcommand goes.
    let typed: String
    /// The subcommands nearest to `typed` (one, or several as near), in the command's order; empty when none is
    /// near enough to be what was meant.
    let nearest: [String]
    /// Every subcommand of the command, in its order.
    let subcommands: [String]

    /// The word that names no subcommand in `arguments` (the command line without the program's name), under
    /// `root`; nil when the subcommands named are all there (an argument or option error is ArgumentParser's to
    /// say), or when an option comes first.
    init?(arguments: [String], root: any ParsableCommand.Type) {
        var command = root
        var path = [CommandNames.name(of: root)]
        for argument in arguments {
            let configuration = command.configuration
            guard !configuration.subcommands.isEmpty, configuration.defaultSubcommand == nil,
                !argument.hasPrefix("-")
            else { return nil }
            // ArgumentParser's `help` subcommand is everywhere a command has subcommands.
            if argument == "help" { return nil }
            guard let next = configuration.subcommands.first(where: { CommandNames.names(of: $0).contains(argument) })
            else {
                let names = configuration.subcommands.map(CommandNames.name(of:))
                self.command = path.joined(separator: " ")
                typed = argument
                nearest = Self.nearest(to: argument, among: names)
                subcommands = names
                return
            }
            command = next
            path.append(CommandNames.name(of: next))
        }
        return nil
    }

    /// What the user reads: what failed, why, and what to run instead.
    var failure: CommandFailure {
        let list = subcommands.joined(separator: ", ")
        let what = "unknown subcommand \"\(typed)\""
        let why = "\(command) has no subcommand of that name"
        guard !nearest.isEmpty else {
            return CommandFailure(
                what, why: why, fix: "Use one of \(list): `\(command) --help` says what each does.")
        }
        let suggestions = nearest.map { "`\(command) \($0)`" }.joined(separator: " or ")
        return CommandFailure(
            what, why: why, fix: "Did you mean \(suggestions)? `\(command) --help` lists them all: \(list).")
    }

    /// The names a word is likely a misspelling of: those it begins, for a word of two letters or more (an
    /// abbreviation), else those fewest edits away (`editDistance`), when that is at most a third of the word and
    /// at least one.
    static func nearest(to word: String, among names: [String]) -> [String] {
        let word = word.lowercased()
        let begun = names.filter { $0.hasPrefix(word) }
        if word.count >= 2, !begun.isEmpty { return begun }
        let distances = names.map { editDistance(word, $0) }
        guard let closest = distances.min(), closest <= max(1, word.count / 3) else { return [] }
        return zip(names, distances).filter { $0.1 == closest }.map(\.0)
    }

    /// How many single-character edits (insert, delete, replace, or swap two neighbours) turn `a` into `b`: the
    /// optimal string alignment distance, under which a typed transposition (`plya`) costs one, as it does to the
    /// typist.
    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a)
        let b = Array(b)
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var rows = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { rows[i][0] = i }
        for j in 0...b.count { rows[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                rows[i][j] = min(rows[i - 1][j] + 1, rows[i][j - 1] + 1, rows[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    rows[i][j] = min(rows[i][j], rows[i - 2][j - 2] + 1)
                }
            }
        }
        return rows[a.count][b.count]
    }
}
