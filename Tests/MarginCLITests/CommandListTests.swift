import ArgumentParser
import Testing

@testable import MarginCLI

/// `Margin.run` finds a parsed command's type in `Margin.asyncCommands` instead of asking the
/// runtime whether it is an `AsyncParsableCommand`; a command missing from the list would still
/// run (through that question), only slower, so the list is checked against the command tree.
@Suite struct CommandListTests {
    @Test func everyCommandIsListed() {
        var tree: [any ParsableCommand.Type] = [Margin.self]
        var index = 0
        while index < tree.count {
            tree += tree[index].configuration.subcommands
            index += 1
        }
        let listed = Set(Margin.asyncCommands.map { ObjectIdentifier($0) })
        let missing = tree.filter { !listed.contains(ObjectIdentifier($0)) }.map { String(reflecting: $0) }
        #expect(missing == [])
        #expect(tree.count == Margin.asyncCommands.count)
        #expect(listed.count == Margin.asyncCommands.count)
    }
}
