import Foundation

/// Splits a query into terms: words, and "quoted phrases" (an unclosed quote runs to the end).
public func parseQuery(_ query: String) -> [String] {
    var terms = [String]()
    var current = ""
    var quoted = false
    for character in query {
        if character == "\"" {
            if !current.trimmingCharacters(in: .whitespaces).isEmpty { terms.append(current) }
            current = ""
            quoted.toggle()
        } else if !quoted && character.isWhitespace {
            if !current.isEmpty { terms.append(current) }
            current = ""
        } else {
            current.append(character)
        }
    }
    if !current.trimmingCharacters(in: .whitespaces).isEmpty { terms.append(current) }
    return terms.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }.filter { !$0.isEmpty }
}
