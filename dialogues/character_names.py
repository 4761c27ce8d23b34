"""English names of the characters of the published ChatAnime data (and so of the demo,
which has three of them): the data files name characters in Chinese only, and pages in
English show these beside the Chinese names. Staff can change them in the admin."""

# Character key, as in the data files -> (work in English, name in English).
ENGLISH_NAMES = {
    "《海贼王》的蒙奇·D·路飞": ("One Piece", "Monkey D. Luffy"),
    "《火影忍者》的漩涡鸣人": ("Naruto", "Naruto Uzumaki"),
    "《银魂》的坂田银时": ("Gintama", "Gintoki Sakata"),
    "《夏目友人帐》的夏目贵志": ("Natsume's Book of Friends", "Takashi Natsume"),
    "《刀剑神域》的桐谷和人": ("Sword Art Online", "Kazuto Kirigaya (Kirito)"),
    "《冰菓》的折木奉太郎": ("Hyouka", "Houtarou Oreki"),
    "《进击的巨人》的利威尔·阿克曼": ("Attack on Titan", "Levi Ackerman"),
    "《排球少年！！》的日向翔阳": ("Haikyu!!", "Shoyo Hinata"),
    "《文豪野犬》的中原中也": ("Bungo Stray Dogs", "Chuuya Nakahara"),
    "《咒术回战》的五条悟": ("Jujutsu Kaisen", "Satoru Gojo"),
    "《龙与虎》的逢坂大河": ("Toradora!", "Taiga Aisaka"),
    "《某科学的超电磁炮》的御坂美琴": ("A Certain Scientific Railgun", "Mikoto Misaka"),
    "《命运石之门》的牧濑红莉栖": ("Steins;Gate", "Kurisu Makise"),
    "《Fate Zero》的Saber（阿尔托莉雅·潘德拉贡）": ("Fate/Zero", "Saber (Artoria Pendragon)"),
    "《魔法少女小圆》的鹿目圆": ("Puella Magi Madoka Magica", "Madoka Kaname"),
    "《我的妹妹哪有这么可爱！》的五更琉璃": (
        "Oreimo (My Little Sister Can't Be This Cute)",
        "Ruri Gokou (Kuroneko)",
    ),
    "《刀剑神域》的结城明日奈（亚丝娜）": ("Sword Art Online", "Asuna Yuuki"),
    "《路人女主的养成方法》的加藤惠": ("Saekano: How to Raise a Boring Girlfriend", "Megumi Kato"),
    "《Re：从零开始的异世界生活》的蕾姆": ("Re:Zero − Starting Life in Another World", "Rem"),
    "《紫罗兰永恒花园》的薇尔莉特·伊芙加登": ("Violet Evergarden", "Violet Evergarden"),
}


def character_shown_name(name_zh: str, name_en: str = "") -> str:
    """A character's name on staff and researchers' pages, in either language: the
    Chinese name the data holds, then the English one where it is known ("漩涡鸣人 ·
    Naruto Uzumaki"), so that an English page names the character its reader knows and
    the name still matches the exports, which carry the Chinese one."""
    return f"{name_zh} · {name_en}" if name_en else name_zh
