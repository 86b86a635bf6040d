/// Splits a query into terms: words, and "quoted phrases" (an unclosed quote runs to the end).
public func parseQuery(_ query: String) -> [String] {
    var terms = [String]()
    var current = ""
    var quoted = false
    for character in query {
        if character == "\"" {
            if !current.trimmingWhitespace().isEmpty { terms.append(current) }
            current = ""
            quoted.toggle()
        } else if !quoted && character.isWhitespace {
            if !current.isEmpty { terms.append(current) }
            current = ""
        } else {
            current.append(character)
        }
    }
    if !current.trimmingWhitespace().isEmpty { terms.append(current) }
    return terms.map { $0.trimmingWhitespace() }.filter { !$0.isEmpty }
}
