import ArgumentParser

/// The names of the tool's commands as a user types them, for messages about a command line read before (or
/// instead of) ArgumentParser.
enum CommandNames {
    /// The command's name: the one it is configured with, else the one ArgumentParser derives.
    static func name(of command: any ParsableCommand.Type) -> String {
        command.configuration.commandName ?? command._commandName
    }

    /// Every name the command answers to: its name, then its aliases.
    static func names(of command: any ParsableCommand.Type) -> [String] {
        [name(of: command)] + command.configuration.aliases
    }

    /// The command the leading words of `words` name, subcommand after subcommand, under `root`, and its path as
    /// typed (`["haptics", "audio", "play"]`): the walk stops at the first word that names no subcommand.
    static func command(
        namedBy words: some Sequence<String>, under root: any ParsableCommand.Type
    ) -> (command: any ParsableCommand.Type, path: [String]) {
        var command = root
        var path = [name(of: root)]
        for word in words {
            guard let next = command.configuration.subcommands.first(where: { names(of: $0).contains(word) }) else {
                break
            }
            command = next
            path.append(name(of: next))
        }
        return (command, path)
    }
}
