// The YAML tree the config loader reads: built from yaml-cpp's parser events, it must give
// the loader what yaml-cpp's node graph gave (kinds, text, positions, order, aliases).
#include "config/yaml_tree.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace bk::yaml {
namespace {

Document one(const std::string& text) {
  auto documents = Document::parse_all(text);
  EXPECT_EQ(documents.size(), 1U);
  return std::move(documents.front());
}

std::vector<std::string> keys_of(Node map) {
  std::vector<std::string> out;
  for (const auto& [key, value] : map.pairs()) out.push_back(key.scalar());
  return out;
}

TEST(YamlTreeTest, KindsTextAndSizes) {
  const Document d = one("a: 1\nb: [x, y, z]\nc: {k: v}\nd: \"q\"\n");
  const Node root = d.root();
  ASSERT_TRUE(root.is_map());
  EXPECT_EQ(root.size(), 4U);
  EXPECT_EQ(keys_of(root), (std::vector<std::string>{"a", "b", "c", "d"}));
  std::vector<Node> values;
  for (const auto& [key, value] : root.pairs()) values.push_back(value);
  EXPECT_TRUE(values[0].is_scalar());
  EXPECT_EQ(values[0].scalar(), "1");
  ASSERT_TRUE(values[1].is_sequence());
  EXPECT_EQ(values[1].size(), 3U);
  std::string items;
  for (const Node item : values[1].items()) items += item.scalar();
  EXPECT_EQ(items, "xyz");
  EXPECT_TRUE(values[2].is_map());
  EXPECT_EQ(values[2].size(), 1U);
  EXPECT_EQ(values[3].scalar(), "q");
  // A container's text is empty; a scalar has no items or pairs.
  EXPECT_EQ(values[1].scalar(), "");
  EXPECT_EQ(values[0].size(), 0U);
  EXPECT_FALSE(values[0].items().begin() != values[0].items().end());
  EXPECT_FALSE(values[0].pairs().begin() != values[0].pairs().end());
}

TEST(YamlTreeTest, NullsAreNullButQuotedNullIsText) {
  const Document d = one("a:\nb: ~\nc: null\nd: \"null\"\ne: ''\n");
  std::vector<Node> values;
  for (const auto& [key, value] : d.root().pairs()) values.push_back(value);
  ASSERT_EQ(values.size(), 5U);
  EXPECT_TRUE(values[0].is_null());
  EXPECT_TRUE(values[1].is_null());
  EXPECT_TRUE(values[2].is_null());
  EXPECT_TRUE(values[3].is_scalar());
  EXPECT_EQ(values[3].scalar(), "null");
  EXPECT_TRUE(values[4].is_scalar());
  EXPECT_EQ(values[4].scalar(), "");
}

TEST(YamlTreeTest, MarksAreZeroBasedLineAndColumn) {
  const Document d = one("boards:\n  - name: x\n    periods: [daily]\n");
  const Node boards = (*d.root().pairs().begin()).second;
  ASSERT_TRUE(boards.is_sequence());
  const Node board = *boards.items().begin();
  EXPECT_EQ(board.mark().line, 1);
  EXPECT_EQ(board.mark().column, 4);
  auto it = board.pairs().begin();
  ++it;
  const auto [key, value] = *it;
  EXPECT_EQ(key.scalar(), "periods");
  EXPECT_EQ(key.mark().line, 2);
  EXPECT_EQ(key.mark().column, 4);
  EXPECT_EQ(value.mark().line, 2);
  EXPECT_EQ(value.mark().column, 13);
}

TEST(YamlTreeTest, DuplicateKeysAreKeptInFileOrder) {
  const Document d = one("a: 1\nb: 2\na: 3\n");
  EXPECT_EQ(keys_of(d.root()), (std::vector<std::string>{"a", "b", "a"}));
  EXPECT_EQ(d.root().size(), 3U);
}

TEST(YamlTreeTest, AnAliasIsTheAnchoredNode) {
  const Document d = one("base: &r {daily: 2d}\nother: *r\nlist: [&s one, *s]\n");
  std::vector<Node> values;
  for (const auto& [key, value] : d.root().pairs()) values.push_back(value);
  ASSERT_TRUE(values[1].is_map());
  EXPECT_EQ(keys_of(values[1]), (std::vector<std::string>{"daily"}));
  std::string items;
  for (const Node item : values[2].items()) items += item.scalar() + ",";
  EXPECT_EQ(items, "one,one,");
}

TEST(YamlTreeTest, NestedContainersKeepTheirOwnChildren) {
  const Document d = one("- [1, [2, 3], 4]\n- {a: [5], b: 6}\n- 7\n");
  std::string flat;
  const auto walk = [&](const auto& self, Node n) -> void {
    if (n.is_scalar()) flat += n.scalar();
    if (n.is_sequence()) {
      flat += "[";
      for (const Node item : n.items()) self(self, item);
      flat += "]";
    }
    if (n.is_map()) {
      flat += "{";
      for (const auto& [k, v] : n.pairs()) {
        self(self, k);
        flat += ":";
        self(self, v);
      }
      flat += "}";
    }
  };
  walk(walk, d.root());
  EXPECT_EQ(flat, "[[1[23]4]{a:[5]b:6}7]");
}

TEST(YamlTreeTest, EveryDocumentOfAStream) {
  const auto documents = Document::parse_all("a: 1\n---\nb: 2\n");
  ASSERT_EQ(documents.size(), 2U);
  EXPECT_EQ(keys_of(documents[1].root()), (std::vector<std::string>{"b"}));
  EXPECT_EQ(documents[1].root().mark().line, 2);
  EXPECT_TRUE(Document::parse_all("").empty());
}

TEST(YamlTreeTest, ASyntaxErrorCarriesItsPosition) {
  try {
    Document::parse_all("boards:\n  - name: b\n   bad: [1\n");
    FAIL() << "expected a SyntaxError";
  } catch (const SyntaxError& e) {
    EXPECT_EQ(e.mark.line, 2);
    EXPECT_GE(e.mark.column, 0);
    EXPECT_NE(std::string(e.what()), "");
  }
}

// Nodes point into their document's tree, which stays put when the Document moves (as
// when the vector of documents grows or a document is moved out of it).
TEST(YamlTreeTest, NodesStayValidWhenTheirDocumentMoves) {
  std::vector<Document> documents = Document::parse_all("a: [1, 2]\n");
  const Node root = documents.front().root();
  const Document moved = std::move(documents.front());
  documents.clear();
  documents.shrink_to_fit();
  ASSERT_TRUE(root.is_map());
  std::string items;
  for (const auto& [key, value] : root.pairs()) {
    for (const Node item : value.items()) items += item.scalar();
  }
  EXPECT_EQ(items, "12");
  EXPECT_EQ(moved.root().mark().line, root.mark().line);
}

TEST(YamlTreeTest, TheUndefinedNodeAndTheEmptyMap) {
  const Node undefined;
  EXPECT_FALSE(undefined.defined());
  EXPECT_EQ(undefined.mark().line, -1);
  EXPECT_EQ(undefined.scalar(), "");
  EXPECT_EQ(undefined.size(), 0U);
  const Node empty = Node::empty_map();
  EXPECT_TRUE(empty.is_map());
  EXPECT_EQ(empty.size(), 0U);
  EXPECT_FALSE(empty.pairs().begin() != empty.pairs().end());
}

}  // namespace
}  // namespace bk::yaml
