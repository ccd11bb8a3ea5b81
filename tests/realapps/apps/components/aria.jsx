// React Aria Components (Adobe): one page with every widget kind the library has. Bundled by
// scripts/ensure-realapps.sh with esbuild. The app's own state, which the tests judge, is kept in
// localStorage "state" (one JSON object, a key per widget), written on every change.
import React, {useState} from "react";
import {createRoot} from "react-dom/client";
import {parseDate} from "@internationalized/date";
import {
  Button, Calendar, CalendarCell, CalendarGrid, Checkbox, ComboBox, DateInput, DatePicker, DateSegment, Dialog,
  DialogTrigger, FileTrigger, Group, Heading, Input, Label, ListBox, ListBoxItem, Menu, MenuItem, MenuTrigger, Modal,
  Popover, Radio, RadioGroup, Select, SelectValue, Slider, SliderOutput, SliderThumb, SliderTrack, SubmenuTrigger,
  Switch, Tab, TabList, TabPanel, Tabs, Text, TextField, Tree, TreeItem, TreeItemContent,
  UNSTABLE_Toast as Toast, UNSTABLE_ToastContent as ToastContent, UNSTABLE_ToastQueue as ToastQueue,
  UNSTABLE_ToastRegion as ToastRegion,
} from "react-aria-components";

const state = JSON.parse(localStorage.getItem("state") || "{}");
function save(key, value) {
  state[key] = value;
  localStorage.setItem("state", JSON.stringify(state));
}
const toasts = new ToastQueue({maxVisibleToasts: 3});
const COUNTRIES = ["Argentina", "Brazil", "Canada", "Denmark", "Norway", "Peru", "Portugal", "Spain", "Sweden"];

function Box({selected}) {
  return <span className="box" aria-hidden="true">{selected ? "✓" : ""}</span>;
}

function Section({title, children}) {
  return <section><h2>{title}</h2>{children}</section>;
}

function App() {
  const [project, setProject] = useState("Apollo");
  const [code] = useState(() => "K" + Math.floor(1000 + Math.random() * 9000));
  return (
    <main>
      <h1>Project settings</h1>
      <Section title="Consent">
        <Checkbox onChange={(v) => save("terms", v)}>{({isSelected}) => <><Box selected={isSelected}/>Accept the terms</>}</Checkbox>
      </Section>
      <Section title="Size">
        <RadioGroup onChange={(v) => save("size", v)} defaultValue="small">
          <Label>T-shirt size</Label>
          <Radio value="small">Small</Radio><Radio value="medium">Medium</Radio><Radio value="large">Large</Radio>
        </RadioGroup>
      </Section>
      <Section title="Network">
        <Switch onChange={(v) => save("wifi", v)}><span className="track"/>Wi-Fi</Switch>
      </Section>
      <Section title="Audio">
        <Slider defaultValue={30} onChangeEnd={(v) => save("volume", v)}>
          <Label>Volume</Label><SliderOutput/>
          <SliderTrack className="slider-track">{({state}) => <SliderThumb index={0} className="thumb"/>}</SliderTrack>
        </Slider>
      </Section>
      <Section title="Plan">
        <Select onSelectionChange={(k) => save("plan", k)} defaultSelectedKey="free">
          <Label>Plan</Label>
          <Button><SelectValue/> ▾</Button>
          <Popover><ListBox>
            <ListBoxItem id="free">Free</ListBoxItem><ListBoxItem id="team">Team</ListBoxItem>
            <ListBoxItem id="pro">Pro</ListBoxItem><ListBoxItem id="enterprise">Enterprise</ListBoxItem>
          </ListBox></Popover>
        </Select>
      </Section>
      <Section title="Shipping">
        <ComboBox onSelectionChange={(k) => save("country", k)}>
          <Label>Country</Label>
          <div><Input/><Button>▾</Button></div>
          <Popover><ListBox>{COUNTRIES.map((c) => <ListBoxItem key={c} id={c}>{c}</ListBoxItem>)}</ListBox></Popover>
        </ComboBox>
      </Section>
      <Section title="Actions">
        <MenuTrigger>
          <Button>Actions</Button>
          <Popover><Menu onAction={(k) => save("action", k)}>
            <MenuItem id="copy">Copy link</MenuItem>
            <SubmenuTrigger>
              <MenuItem>Share</MenuItem>
              <Popover><Menu onAction={(k) => save("action", k)}>
                <MenuItem id="share-email">Email</MenuItem><MenuItem id="share-chat">Chat</MenuItem>
              </Menu></Popover>
            </SubmenuTrigger>
            <MenuItem id="archive">Archive</MenuItem>
          </Menu></Popover>
        </MenuTrigger>
      </Section>
      <Section title="Details">
        <Tabs onSelectionChange={(k) => save("tab", k)}>
          <TabList aria-label="Details">
            <Tab id="overview">Overview</Tab><Tab id="billing">Billing</Tab><Tab id="team">Team</Tab>
          </TabList>
          <TabPanel id="overview">The project overview.</TabPanel>
          <TabPanel id="billing">Invoices are sent monthly.</TabPanel>
          <TabPanel id="team">Three members.</TabPanel>
        </Tabs>
      </Section>
      <Section title="Schedule">
        <DatePicker defaultValue={parseDate("2026-03-01")} onChange={(d) => save("date", d && d.toString())}>
          <Label>Launch date</Label>
          <Group><DateInput>{(segment) => <DateSegment segment={segment}/>}</DateInput><Button>📅</Button></Group>
          <Popover><Dialog><Calendar>
            <header><Button slot="previous">◀</Button><Heading/><Button slot="next">▶</Button></header>
            <CalendarGrid>{(date) => <CalendarCell date={date}/>}</CalendarGrid>
          </Calendar></Dialog></Popover>
        </DatePicker>
      </Section>
      <Section title="Project">
        <p>Project name: <output id="project-name">{project}</output></p>
        <DialogTrigger>
          <Button>Rename project</Button>
          <Modal><Dialog>{({close}) => (
            <form onSubmit={(e) => {
              e.preventDefault();
              const name = new FormData(e.currentTarget).get("name");
              setProject(name); save("project", name); close();
            }}>
              <Heading slot="title">Rename project</Heading>
              <TextField name="name" defaultValue={project} autoFocus><Label>New name</Label><Input/></TextField>
              <Button type="submit">Save name</Button><Button onPress={close}>Cancel</Button>
            </form>)}
          </Dialog></Modal>
        </DialogTrigger>
      </Section>
      <Section title="Files">
        <Tree aria-label="Files" selectionMode="single" onSelectionChange={(keys) => save("file", [...keys][0])}>
          <TreeItem id="documents" textValue="Documents">
            <TreeItemContent>{({hasChildItems, isExpanded}) => <>
              {hasChildItems && <Button slot="chevron">{isExpanded ? "▾" : "▸"}</Button>}Documents</>}
            </TreeItemContent>
            <TreeItem id="report" textValue="Report.pdf"><TreeItemContent>Report.pdf</TreeItemContent></TreeItem>
            <TreeItem id="budget" textValue="Budget.xlsx"><TreeItemContent>Budget.xlsx</TreeItemContent></TreeItem>
          </TreeItem>
          <TreeItem id="photos" textValue="Photos"><TreeItemContent>Photos</TreeItemContent></TreeItem>
        </Tree>
      </Section>
      <Section title="Attachment">
        <FileTrigger onSelect={(files) => files && files.length && save("upload", [...files].map((f) => f.name))}>
          <Button>Attach a file</Button>
        </FileTrigger>
      </Section>
      <Section title="Notifications">
        <TextField onChange={(v) => save("confirmation", v)}><Label>Confirmation code</Label><Input/></TextField>
        <Button onPress={() => toasts.add({title: `Your code is ${code}`}, {timeout: 0})}>Send code</Button>
      </Section>
      <ToastRegion queue={toasts}>{({toast}) => (
        <Toast toast={toast}><ToastContent><Text slot="title">{toast.content.title}</Text></ToastContent>
          <Button slot="close">Dismiss</Button></Toast>)}
      </ToastRegion>
      <CodeKeeper code={code}/>
    </main>
  );
}

// The code the toast shows, kept where the tests can compare the Agent's answer with it.
function CodeKeeper({code}) {
  save("code", code);
  return null;
}

createRoot(document.getElementById("root")).render(<App/>);
