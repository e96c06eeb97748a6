from memoir.knowledge.chunking import chunk_text, document_title


def test_chunks_keep_the_heading_path_of_their_section() -> None:
    text = (
        "# Guide\n\nIntro.\n\n## Refunds\n\nRefunds take 5 days.\n\n### Abroad\n\nLonger abroad.\n"
    )
    chunks = chunk_text(text)
    assert [(c.heading, c.text) for c in chunks] == [
        ("Guide", "Intro."),
        ("Guide > Refunds", "Refunds take 5 days."),
        ("Guide > Refunds > Abroad", "Longer abroad."),
    ]
    assert [c.ordinal for c in chunks] == [0, 1, 2]


def test_a_chunk_never_spans_two_sections() -> None:
    chunks = chunk_text("# A\n\nalpha text.\n\n# B\n\nbeta text.\n")
    assert [c.text for c in chunks] == ["alpha text.", "beta text."]


def test_long_sections_are_split_near_the_target_size_with_overlap() -> None:
    sentences = [f"Sentence number {i} says something worth keeping." for i in range(60)]
    paragraphs = "\n\n".join(" ".join(sentences[i : i + 3]) for i in range(0, 60, 3))
    chunks = chunk_text("# Long\n\n" + paragraphs, target=800, overlap=120)
    assert len(chunks) > 3
    assert all(len(c.text) <= 800 for c in chunks)
    for before, after in zip(chunks, chunks[1:], strict=False):
        last_sentence = before.text.split(". ")[-1]
        assert after.text.startswith(last_sentence)  # the overlap
    joined = " ".join(c.text for c in chunks)
    assert all(s in joined for s in sentences)


def test_an_oversized_paragraph_is_cut_on_word_boundaries() -> None:
    word_soup = " ".join(["word"] * 500)
    chunks = chunk_text(word_soup, target=800, overlap=0)
    assert all(len(c.text) <= 800 for c in chunks)
    assert sum(c.text.count("word") for c in chunks) == 500


def test_plain_text_without_headings_has_an_empty_heading_path() -> None:
    [chunk] = chunk_text("Just a note.\nOn two lines.")
    assert (chunk.heading, chunk.text) == ("", "Just a note.\nOn two lines.")


def test_title_is_the_first_h1_else_the_file_name() -> None:
    assert document_title("intro\n# Team Handbook\n## x", "f") == "Team Handbook"
    assert document_title("no heading", "team_handbook") == "Team Handbook"
