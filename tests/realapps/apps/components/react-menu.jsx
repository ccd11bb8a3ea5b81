// @szhsin/react-menu (npm): a menu button with a submenu, and a menu bar of its own. Its entries
// are <li role=menuitem> with a roving tabindex; a submenu's entry has aria-haspopup and
// aria-expanded. The page's state, which the tests judge, is localStorage "state", written on
// every change.
import { useState } from "react";
import { createRoot } from "react-dom/client";
import { Menu, MenuItem, MenuButton, SubMenu, MenuDivider } from "@szhsin/react-menu";
import "@szhsin/react-menu/dist/index.css";

const state = JSON.parse(localStorage.getItem("state") || "{}");
const save = (key, value) => {
  state[key] = value;
  localStorage.setItem("state", JSON.stringify(state));
};

function App() {
  const [last, setLast] = useState("nothing yet");
  const act = (action) => () => {
    save("action", action);
    setLast(action);
  };
  return (
    <main style={{ font: "14px sans-serif", margin: 24 }}>
      <h1>Document settings</h1>
      <Menu menuButton={<MenuButton>Actions</MenuButton>}>
        <MenuItem onClick={act("copy")}>Copy link</MenuItem>
        <SubMenu label="Share">
          <MenuItem onClick={act("share-email")}>Email</MenuItem>
          <MenuItem onClick={act("share-chat")}>Chat</MenuItem>
        </SubMenu>
        <MenuDivider />
        <MenuItem onClick={act("archive")}>Archive</MenuItem>
      </Menu>
      <p>Last action: {last}</p>
    </main>
  );
}

createRoot(document.getElementById("root")).render(<App />);
